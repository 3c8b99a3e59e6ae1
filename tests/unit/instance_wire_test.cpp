// What an actor host and its instance processes say to each other
// (worker/instance_wire.hpp): every frame round-trips, frames arrive whole
// however the bytes are split, and bytes that are no frame are refused,
// never read past.

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <sys/socket.h>
#include <unistd.h>

#include "worker/instance_wire.hpp"

namespace instance_wire_test {

namespace wire = prism::actors::instance_wire;
using prism::task_id;
using prism::worker_id;

task_id some_task(std::uint64_t seq) {
  return {worker_id{{0x1234, 0x5678}}, seq};
}

prism::detail::value some_value(const std::string& bytes) {
  auto buf =
      std::make_shared<prism::detail::byte_buffer>(bytes.begin(), bytes.end());
  return {42, std::move(buf), {}};
}

/// `x` written as a frame of kind `k` and read back, through the reader.
template <class T>
T roundtrip(wire::kind k, const T& x) {
  auto bytes = wire::encode(k, x);
  wire::frame_reader reader;
  reader.take(bytes.data(), bytes.size());
  auto f = reader.next();
  BOOST_REQUIRE(f.has_value());
  BOOST_TEST(static_cast<int>(f->what) == static_cast<int>(k));
  T back;
  BOOST_REQUIRE(wire::decode(*f, back));
  BOOST_TEST(!reader.next().has_value());
  return back;
}

wire::run some_batch() {
  wire::run r;
  r.batch = 9;
  r.resume = true;
  r.calls.push_back({some_task(1), "counter::add", {some_value("abc")}, true});
  r.calls.push_back({some_task(2), "counter::get", {}, false});
  return r;
}

} // namespace instance_wire_test

using namespace instance_wire_test;

BOOST_AUTO_TEST_SUITE(instance_wire)

BOOST_AUTO_TEST_CASE(every_frame_round_trips) {
  auto h = roundtrip(wire::kind::hello, wire::hello{"token", 77});
  BOOST_TEST(h.token == "token");
  BOOST_TEST(h.pid == 77);

  wire::construct c;
  c.factory = "counter::create";
  c.args = {some_value("xyz")};
  c.num_restarts = 3;
  c.source = "counter";
  c.job = prism::job_id{5};
  auto c2 = roundtrip(wire::kind::construct, c);
  BOOST_TEST(c2.factory == c.factory);
  BOOST_TEST(c2.args.size() == 1u);
  BOOST_TEST((c2.args.front() == c.args.front()));
  BOOST_TEST(c2.num_restarts == 3);
  BOOST_TEST(c2.job.value == 5u);

  BOOST_TEST(
      roundtrip(wire::kind::constructed, wire::constructed{"threw"}).failure ==
      "threw");

  auto r = roundtrip(wire::kind::run, some_batch());
  BOOST_TEST(r.batch == 9u);
  BOOST_TEST(r.resume);
  BOOST_REQUIRE(r.calls.size() == 2u);
  BOOST_TEST(r.calls[0].method == "counter::add");
  BOOST_TEST(r.calls[0].timed);
  BOOST_TEST((r.calls[1].task == some_task(2)));

  wire::ran done;
  done.batch = 9;
  done.exit_requested = true;
  wire::outcome o;
  o.task = some_task(1);
  o.ok = true;
  o.result = some_value("1");
  o.start_us = 10;
  o.end_us = 20;
  o.waits = true;
  done.outcomes = {o};
  auto d = roundtrip(wire::kind::ran, done);
  BOOST_TEST(d.exit_requested);
  BOOST_REQUIRE(d.outcomes.size() == 1u);
  BOOST_TEST(d.outcomes[0].waits);
  BOOST_TEST(d.outcomes[0].end_us == 20);

  BOOST_TEST((roundtrip(wire::kind::cancel, wire::cancel{some_task(4)}).task ==
              some_task(4)));
  BOOST_TEST((roundtrip(wire::kind::wake, wire::wake{some_task(5)}).task ==
              some_task(5)));

  wire::runtime_call call;
  call.id = 3;
  call.what = wire::op::kv_put;
  call.name = "ns";
  call.key = "k";
  call.text = "v";
  call.flag = true;
  call.task_options.max_retries = 7;
  call.actor_options.concurrency_groups = {{"io", 2}};
  call.list_options.filters = {"state=alive"};
  auto call2 = roundtrip(wire::kind::runtime_call, call);
  BOOST_TEST(static_cast<int>(call2.what) ==
             static_cast<int>(wire::op::kv_put));
  BOOST_TEST(call2.text == "v");
  BOOST_TEST(call2.task_options.max_retries == 7);
  BOOST_TEST(call2.actor_options.concurrency_groups.size() == 1u);
  BOOST_TEST(call2.list_options.filters.front() == "state=alive");

  wire::runtime_answer a;
  a.id = 3;
  a.error.code = prism::errc::timeout;
  a.ready = {1, 0};
  a.keys = {"a", "b"};
  a.bytes.handle = 8;
  a.bytes.offset = 4096;
  auto a2 = roundtrip(wire::kind::runtime_answer, a);
  BOOST_TEST((a2.error.code == prism::errc::timeout));
  BOOST_TEST(a2.ready.size() == 2u);
  BOOST_TEST(a2.bytes.handle == 8u);
  BOOST_TEST(a2.bytes.offset == 4096u);

  wire::metrics m;
  m.series.push_back({});
  m.series.back().name = "calls";
  m.series.back().value = 3;
  auto m2 = roundtrip(wire::kind::metrics, m);
  BOOST_REQUIRE(m2.series.size() == 1u);
  BOOST_TEST(m2.series.front().name == "calls");
}

BOOST_AUTO_TEST_CASE(frames_arrive_whole_however_their_bytes_are_split) {
  std::vector<char> stream;
  for (int i = 0; i < 20; ++i) {
    auto bytes = wire::encode(wire::kind::run, some_batch());
    stream.insert(stream.end(), bytes.begin(), bytes.end());
  }
  std::mt19937 rng{7};
  wire::frame_reader reader;
  int frames = 0;
  for (std::size_t at = 0; at < stream.size();) {
    auto n = std::min<std::size_t>(1 + rng() % 37, stream.size() - at);
    reader.take(stream.data() + at, n);
    at += n;
    while (auto f = reader.next()) {
      wire::run r;
      BOOST_REQUIRE(wire::decode(*f, r));
      BOOST_TEST(r.calls.size() == 2u);
      ++frames;
    }
  }
  BOOST_TEST(frames == 20);
  BOOST_TEST(!reader.broken());
}

BOOST_AUTO_TEST_CASE(bytes_that_are_no_frame_are_refused) {
  // A length past the largest frame: refused before anything is read.
  std::vector<char> huge(9, '\xff');
  huge[8] = static_cast<char>(wire::kind::run);
  wire::frame_reader big;
  big.take(huge.data(), huge.size());
  BOOST_TEST(!big.next().has_value());
  BOOST_TEST(big.broken());
  // A kind no side sends.
  auto bytes = wire::encode(wire::kind::cancel, wire::cancel{some_task(1)});
  bytes[8] = 99;
  wire::frame_reader unknown;
  unknown.take(bytes.data(), bytes.size());
  BOOST_TEST(!unknown.next().has_value());
  BOOST_TEST(unknown.broken());
  // A body cut short does not decode.
  auto run = wire::encode(wire::kind::run, some_batch());
  wire::frame cut{wire::kind::run, {run.begin() + 9, run.end() - 3}};
  wire::run r;
  BOOST_TEST(!wire::decode(cut, r));
  // Nor does one with bytes left over.
  wire::frame longer{wire::kind::run, {run.begin() + 9, run.end()}};
  longer.body.push_back('\0');
  BOOST_TEST(!wire::decode(longer, r));
}

BOOST_AUTO_TEST_CASE(random_bytes_never_decode_into_a_crash) {
  std::mt19937 rng{11};
  auto good = wire::encode(wire::kind::runtime_call, wire::runtime_call{});
  for (int i = 0; i < 2000; ++i) {
    std::vector<char> body(good.begin() + 9, good.end());
    // Flip a few bytes, or cut the body, or both.
    for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k)
      body[rng() % body.size()] = static_cast<char>(rng());
    if (rng() % 2 == 0)
      body.resize(rng() % body.size());
    wire::frame f{wire::kind::runtime_call, std::move(body)};
    wire::runtime_call c;
    (void)wire::decode(f, c); // refused or read; never past the bytes
  }
  BOOST_TEST(true);
}

BOOST_AUTO_TEST_CASE(a_frame_crosses_a_socket_whole) {
  int fds[2];
  BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  wire::run big;
  big.calls.push_back(
      {some_task(1), "m", {some_value(std::string(300'000, 'x'))}, false});
  auto bytes = wire::encode(wire::kind::run, big);
  // Larger than the socket's buffer: written while read.
  std::thread writer{[&] { BOOST_TEST(wire::write_frame(fds[0], bytes)); }};
  auto f = wire::read_frame(fds[1]);
  writer.join();
  BOOST_REQUIRE(f.has_value());
  wire::run back;
  BOOST_REQUIRE(wire::decode(*f, back));
  BOOST_TEST(back.calls.front().args.front().size() == 300'000u);
  ::close(fds[0]);
  // The end of the stream: no frame.
  BOOST_TEST(!wire::read_frame(fds[1]).has_value());
  ::close(fds[1]);
}

BOOST_AUTO_TEST_SUITE_END()
