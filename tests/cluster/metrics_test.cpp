// The metrics port of every process of a cluster (`/metrics`), and the HTTP
// port under it: its figures against the cluster's, its TLS and token, and
// what hostile clients cannot do to it.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <sys/resource.h>
#include <thread>
#include <tuple>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <prism/metrics.hpp>
#include <prism/prism.hpp>
#include <prism/testing.hpp>

#include "http/http_server.hpp"
#include "http_client.hpp"
#include "prism_command.hpp"
#include "raw_peer.hpp"

namespace metrics_test {

using namespace prism::cluster_test;
using prism::actors::http_reply;
using prism::actors::http_request;
using prism::actors::http_server;
using prism::actors::http_settings;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

/// The whole answer to `request` over TLS, trusting `ca`; "" if the
/// handshake failed.
std::string exchange_tls(const std::string& address, const std::string& ca,
                         const std::string& request) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx{
      SSL_CTX_new(TLS_client_method()), SSL_CTX_free};
  SSL_CTX_load_verify_locations(ctx.get(), ca.c_str(), nullptr);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  int fd = connect_to(address);
  if (fd < 0)
    return {};
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl{SSL_new(ctx.get()), SSL_free};
  SSL_set_fd(ssl.get(), fd);
  std::string heard;
  if (SSL_connect(ssl.get()) == 1) {
    SSL_write(ssl.get(), request.data(), static_cast<int>(request.size()));
    char buf[4096];
    int n = 0;
    while ((n = SSL_read(ssl.get(), buf, sizeof(buf))) > 0)
      heard.append(buf, static_cast<std::size_t>(n));
  }
  ERR_clear_error();
  ::close(fd);
  return heard;
}

/// The value of the series `series` (its name and labels, exactly as the
/// text has them) in a metrics text; -1 if it has none.
double value_of(const std::string& text, const std::string& series) {
  auto at = text.find("\n" + series + " ");
  if (at == std::string::npos)
    return -1;
  return std::atof(text.c_str() + at + series.size() + 2);
}

/// The number of series (lines that are not comments) of a metrics text.
std::size_t series_in(const std::string& text) {
  std::size_t n = 0;
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#')
      ++n;
  return n;
}

struct sleeper_actor {
  static sleeper_actor* create() {
    return new sleeper_actor;
  }
  int ping() {
    return 1;
  }
};

int twice(int x) {
  return 2 * x;
}

PRISM_REMOTE(twice);
PRISM_REMOTE(sleeper_actor::create, &sleeper_actor::ping);

// -- the figures
// ---------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(metrics_port)

BOOST_AUTO_TEST_CASE(head_and_nodes_serve_the_figures_of_the_cluster) {
  auto o = attached_cluster(1);
  o.cpus = 2;
  o.driver.task_events = true;
  process_cluster c{o};
  auto head = c.metrics_url(0);
  auto node = c.metrics_url(1);
  BOOST_REQUIRE_MESSAGE(head.rfind("http://127.0.0.1:", 0) == 0, head);
  BOOST_REQUIRE_MESSAGE(node.rfind("http://127.0.0.1:", 0) == 0, node);

  std::vector<prism::actor_handle<sleeper_actor>> actors;
  for (int i = 0; i < 3; ++i)
    actors.push_back(prism::actor(sleeper_actor::create).remote());
  for (auto& a : actors)
    BOOST_REQUIRE_EQUAL(prism::get(a.task(&sleeper_actor::ping).remote(), 60s),
                        1);
  std::vector<prism::object_ref<int>> refs;
  for (int i = 0; i < 20; ++i)
    refs.push_back(prism::task(twice).remote(i));
  for (auto& r : refs)
    prism::get(r, 60s);

  std::string text;
  BOOST_CHECK_MESSAGE(
      eventually(
          20s,
          [&] {
            text = get(head);
            return value_of(
                       text,
                       "prism_tasks{function=\"twice\",state=\"FINISHED\"}") ==
                   20;
          }),
      text);
  BOOST_CHECK_EQUAL(value_of(text, "prism_cluster_nodes{state=\"ALIVE\"}"), 2);
  BOOST_CHECK_EQUAL(
      value_of(text, "prism_actors{class=\"sleeper_actor\",state=\"ALIVE\"}"),
      3);
  BOOST_CHECK_EQUAL(value_of(text, "prism_jobs{state=\"RUNNING\"}"), 1);
  BOOST_CHECK_EQUAL(
      value_of(text, "prism_cluster_resource_capacity{resource=\"CPU\"}"), 4);
  BOOST_CHECK_GE(value_of(text, "prism_task_run_duration_seconds_count"), 20);
  BOOST_CHECK_GE(value_of(text, "prism_task_scheduling_duration_seconds_count"),
                 20);
  BOOST_CHECK_GE(
      value_of(text, "prism_control_store_write_duration_seconds_count"), 1);
  BOOST_CHECK_EQUAL(
      value_of(text, "prism_metrics_source_up{source=\"control_store\"}"), 1);
  // Every live node reports each second.
  std::smatch ages;
  std::regex age{"prism_node_heartbeat_age_seconds\\{node=\"[0-9a-f]+\"\\} "
                 "([0-9.e+-]+)"};
  std::size_t nodes = 0;
  for (auto i = std::sregex_iterator(text.begin(), text.end(), age);
       i != std::sregex_iterator(); ++i, ++nodes)
    BOOST_CHECK_LT(std::stod((*i)[1]), 5.0);
  BOOST_CHECK_EQUAL(nodes, 2u);
  // No series carries an actor's, a task's or a worker's id.
  for (const auto& a : actors)
    BOOST_CHECK(!contains(text, a.id().hex()));
  BOOST_TEST_MESSAGE("the head's metrics: " << series_in(text) << " series");

  // The node's own: its workers, its resources, its store.
  auto mine = get(node);
  BOOST_TEST_MESSAGE("a node's metrics: " << series_in(mine) << " series");
  BOOST_CHECK_EQUAL(value_of(mine, "prism_metrics_source_up{source=\"node\"}"),
                    1);
  BOOST_CHECK(contains(mine, "prism_node_resource_capacity{node=\""));
  BOOST_CHECK(contains(mine, "prism_node_workers{node=\""));
  BOOST_CHECK(!contains(mine, "prism_cluster_nodes"));
}

BOOST_AUTO_TEST_CASE(a_process_started_without_a_metrics_port_names_none) {
  auto o = attached_cluster(0);
  o.attach = false;
  o.flags = {"--metrics-export-port", "-1"};
  process_cluster c{o};
  BOOST_CHECK(c.metrics_url(0).empty());
}

BOOST_AUTO_TEST_SUITE_END()

/// A CA and a certificate for 127.0.0.1, made by `prism cert`.
struct tls_dir {
  tls_dir() {
    char pattern[] = "/tmp/prism-http-certs-XXXXXX";
    dir = ::mkdtemp(pattern);
    process_cluster s{[] {
      auto o = attached_cluster(0);
      o.head = false;
      o.attach = false;
      return o;
    }()};
    for (auto args : std::vector<std::vector<std::string>>{
             {"cert", "init", dir + "/ca"},
             {"cert", "issue", dir + "/ca", "127.0.0.1"}})
      BOOST_REQUIRE_EQUAL(s.run(args).status, 0);
  }
  ~tls_dir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string dir;
};

http_settings echo_port(const std::string& token) {
  http_settings s;
  s.what = "test";
  s.token = token;
  s.routes["/hello"] = [](const http_request& r) {
    http_reply reply;
    reply.body = "hello " + r.param("name", "nobody");
    return reply;
  };
  return s;
}

// -- the port's door: TLS and the token
// ----------------------------------------

BOOST_AUTO_TEST_SUITE(metrics_port_door)

BOOST_AUTO_TEST_CASE(without_the_token_nothing_is_read) {
  http_server port{echo_port("s3cret")};
  auto at = "127.0.0.1:" + std::to_string(port.port());
  auto none = http_exchange(at, get_request("/hello?name=a"));
  BOOST_CHECK(contains(none, "401"));
  BOOST_CHECK(!contains(none, "hello a"));
  auto wrong =
      http_exchange(at, get_request("/hello", "Authorization: Bearer x\r\n"));
  BOOST_CHECK(contains(wrong, "401"));
  auto right = http_exchange(
      at, get_request("/hello?name=a%20b", "Authorization: Bearer s3cret\r\n"));
  BOOST_CHECK_MESSAGE(contains(right, "200 OK") && contains(right, "hello a b"),
                      right);
  auto cookie = http_exchange(
      at, get_request("/hello", "Cookie: x=1; prism_token=s3cret\r\n"));
  BOOST_CHECK(contains(cookie, "hello nobody"));
  // The login form sets the cookie for the right token only.
  auto form = [&](const std::string& body) {
    return http_exchange(
        at, "POST /login HTTP/1.1\r\nHost: x\r\nConnection: "
            "close\r\nContent-Type: "
            "application/x-www-form-urlencoded\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body);
  };
  BOOST_CHECK(contains(form("token=s3cret"), "Set-Cookie: prism_token=s3cret"));
  BOOST_CHECK(!contains(form("token=guess"), "Set-Cookie"));
  // Read-only: no method but GET and HEAD (and the login) is taken.
  auto put =
      http_exchange(at, "PUT /hello HTTP/1.1\r\nHost: x\r\nAuthorization: "
                        "Bearer s3cret\r\nContent-Length: 0\r\n\r\n");
  BOOST_CHECK(contains(put, "405"));
  BOOST_CHECK_EQUAL(port.counters().unauthorized, 3u);
}

BOOST_AUTO_TEST_CASE(a_tls_head_serves_https_and_wants_the_token) {
  tls_dir certs;
  auto o = attached_cluster(0);
  o.attach = false;
  auto mine = certs.dir + "/ca/127.0.0.1";
  auto ca = certs.dir + "/ca/ca.pem";
  o.flags = {"--tls-cert",  mine + ".pem", "--tls-key",
             mine + ".key", "--tls-ca",    ca};
  process_cluster c{o};
  auto url = c.metrics_url(0);
  BOOST_REQUIRE_MESSAGE(url.rfind("https://127.0.0.1:", 0) == 0, url);
  std::ifstream in{c.session_dir() + "/token"};
  std::string token;
  std::getline(in, token);
  BOOST_REQUIRE(!token.empty());
  auto at = address_of_url(url);
  auto refused = exchange_tls(at, ca, get_request("/metrics"));
  BOOST_CHECK_MESSAGE(contains(refused, "401"), refused);
  auto ok = exchange_tls(
      at, ca,
      get_request("/metrics", "Authorization: Bearer " + token + "\r\n"));
  BOOST_CHECK_MESSAGE(contains(ok, "prism_cluster_nodes{state=\"ALIVE\"} 1"),
                      ok);
  BOOST_CHECK(!contains(http_exchange(at, get_request("/metrics")), "200 OK"));
}

BOOST_AUTO_TEST_CASE(with_tls_files_it_speaks_https_only) {
  tls_dir certs;
  auto s = echo_port("t0ken");
  s.tls.cert = certs.dir + "/ca/127.0.0.1.pem";
  s.tls.key = certs.dir + "/ca/127.0.0.1.key";
  http_server port{s};
  BOOST_CHECK(port.url().rfind("https://", 0) == 0);
  auto at = "127.0.0.1:" + std::to_string(port.port());
  auto ca = certs.dir + "/ca/ca.pem";
  auto ok = exchange_tls(
      at, ca, get_request("/hello", "Authorization: Bearer t0ken\r\n"));
  BOOST_CHECK_MESSAGE(contains(ok, "hello nobody"), ok);
  BOOST_CHECK(contains(exchange_tls(at, ca, get_request("/hello")), "401"));
  // Plain HTTP gets no answer but a closed connection.
  auto plain = http_exchange(
      at, get_request("/hello", "Authorization: Bearer t0ken\r\n"));
  BOOST_CHECK(!contains(plain, "hello"));
  BOOST_CHECK(eventually(5s, [&] { return port.counters().malformed >= 1; }));
}

BOOST_AUTO_TEST_CASE(beyond_loopback_it_refuses_to_open_plain) {
  auto s = echo_port("t");
  s.listen.host = "0.0.0.0";
  BOOST_CHECK_EXCEPTION(
      http_server{s}, prism::invalid_argument_error,
      [](const prism::error& e) { return contains(e.what(), "TLS"); });
  s.insecure = true;
  http_server open{s};
  BOOST_CHECK_GT(open.port(), 0);
}

BOOST_AUTO_TEST_SUITE_END()

// -- hostile clients
// -------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(metrics_port_hostile_input)

http_settings quick_port() {
  auto s = echo_port("");
  s.limits.request_timeout = 1s;
  s.limits.idle_timeout = 1s;
  return s;
}

/// Whether the port still answers a good request at once.
bool answers(const std::string& at) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = http_exchange(at, get_request("/hello?name=still"));
  return contains(r, "hello still") &&
         std::chrono::steady_clock::now() - t0 < 2s;
}

BOOST_AUTO_TEST_CASE(malformed_and_oversized_requests_are_refused) {
  http_server port{quick_port()};
  auto at = "127.0.0.1:" + std::to_string(port.port());
  BOOST_CHECK(contains(http_exchange(at, "GARBAGE\r\n\r\n"), "400"));
  BOOST_CHECK(contains(
      http_exchange(
          at, get_request("/hello", "X: " + std::string(20000, 'a') + "\r\n")),
      "431"));
  BOOST_CHECK(
      contains(http_exchange(at, "POST /login HTTP/1.1\r\nHost: "
                                 "x\r\nContent-Length: 100000000\r\n\r\n"),
               "413"));
  BOOST_CHECK(contains(http_exchange(at, get_request("/nothing")), "404"));
  BOOST_CHECK(answers(at));
  BOOST_CHECK_GE(port.counters().malformed, 3u);
}

BOOST_AUTO_TEST_CASE(a_client_that_sends_a_byte_a_second_holds_nobody_up) {
  http_server port{quick_port()};
  auto at = "127.0.0.1:" + std::to_string(port.port());
  std::vector<int> slow;
  for (int i = 0; i < 20; ++i)
    slow.push_back(connect_to(at));
  auto request = get_request("/hello");
  auto t0 = std::chrono::steady_clock::now();
  // A byte every 100 ms each: none ever completes its request. Time is the
  // subject here: the clients must be slow, so they wait between bytes.
  for (std::size_t b = 0; b < 8; ++b) {
    for (int fd : slow)
      ::send(fd, request.data() + b, 1, MSG_NOSIGNAL);
    BOOST_CHECK(answers(at));
    std::this_thread::sleep_for(100ms);
  }
  // Past the request timeout each slow client is closed.
  for (int fd : slow) {
    bool closed = false;
    heard_from(fd, 3s, &closed);
    BOOST_CHECK(closed);
    ::close(fd);
  }
  BOOST_CHECK_LT(std::chrono::steady_clock::now() - t0, 5s);
  // Counted once the closed request's handler ran, just after the close.
  BOOST_CHECK(eventually(2s, [&] { return port.counters().timed_out >= 20; }));
}

BOOST_AUTO_TEST_CASE(ten_thousand_connections_at_once_leave_it_answering) {
  prism::actors::raise_open_file_limit();
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  auto want = std::min<std::size_t>(10000, (limit.rlim_cur - 200) / 2);
  http_server port{quick_port()};
  auto at = "127.0.0.1:" + std::to_string(port.port());
  std::vector<int> open;
  for (std::size_t i = 0; i < want; ++i) {
    int fd = connect_to(at, /*reset_on_close=*/true,
                        "127.0.0." + std::to_string(2 + i % 50));
    if (fd >= 0)
      open.push_back(fd);
  }
  BOOST_TEST_MESSAGE(open.size() << " connections open");
  BOOST_CHECK_GE(open.size(), want * 9 / 10);
  BOOST_CHECK(answers(at));
  for (int fd : open)
    ::close(fd);
  BOOST_CHECK(
      eventually(10s, [&] { return port.counters().open_connections == 0; }));
  BOOST_CHECK(answers(at));
}

BOOST_AUTO_TEST_CASE(fuzzed_requests_leave_it_answering) {
  http_server port{quick_port()};
  auto at = "127.0.0.1:" + std::to_string(port.port());
  auto inputs = 300;
  if (const char* n = std::getenv("PRISM_FUZZ_INPUTS"))
    inputs = std::atoi(n);
  std::mt19937_64 rng{std::random_device{}()};
  auto seed = rng();
  BOOST_TEST_MESSAGE("seed " << seed << ", " << inputs << " inputs");
  rng.seed(seed);
  auto good = get_request("/hello?name=x", "Cookie: a=b\r\n");
  for (int i = 0; i < inputs; ++i) {
    std::string input;
    if (i % 3 == 0) {
      input.resize(rng() % 2048);
      for (auto& c : input)
        c = static_cast<char>(rng());
    } else {
      input = good;
      for (int flips = 1 + static_cast<int>(rng() % 8); flips > 0; --flips)
        input[rng() % input.size()] = static_cast<char>(rng());
      if (i % 3 == 2)
        input.insert(rng() % input.size(), std::string(rng() % 9000, 'A'));
    }
    http_exchange(at, input);
  }
  BOOST_CHECK(answers(at));
  BOOST_TEST_MESSAGE("malformed " << port.counters().malformed);
}

BOOST_AUTO_TEST_SUITE_END()

// -- the program's own metrics
// ---------------------------------------------------

prism::metrics::counter& served() {
  static prism::metrics::counter c{
      "test_requests_total", "Requests a test task served", {"op"}};
  return c;
}

prism::metrics::histogram& took() {
  static prism::metrics::histogram h{
      "test_request_seconds", "How long a test request took", {0.1, 1, 10}};
  return h;
}

int serve_one(int i) {
  served().inc(1, {{"op", i % 2 == 0 ? "even" : "odd"}});
  took().observe(0.5);
  return i;
}

/// Counts calls into a counter and a gauge, and dies with its process on
/// request.
struct metered_actor {
  static metered_actor* create() {
    return new metered_actor;
  }
  int count(int n) {
    static prism::metrics::gauge depth{"test_queue_depth",
                                       "A test actor's queue depth"};
    for (int i = 0; i < n; ++i)
      served().inc(1, {{"op", "actor"}});
    depth.set(n);
    return n;
  }
  int die() {
    std::_Exit(3);
  }
};

PRISM_REMOTE(serve_one);
PRISM_REMOTE(metered_actor::create, &metered_actor::count, &metered_actor::die);

/// The sum of the series of `name` that carry every label of `labels`
/// (each `key="value"`), over the metrics of processes 0 to `n` - 1.
double summed(const process_cluster& c, std::size_t n, const std::string& name,
              const std::vector<std::string>& labels) {
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::istringstream in{get(c.metrics_url(i))};
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(name + "{", 0) != 0 && line.rfind(name + " ", 0) != 0)
        continue;
      bool all = true;
      for (const auto& l : labels)
        all = all && contains(line, l);
      if (all)
        total += std::atof(line.c_str() + line.rfind(' ') + 1);
    }
  }
  return total;
}

BOOST_AUTO_TEST_SUITE(user_metrics_served)

BOOST_AUTO_TEST_CASE(nodes_serve_what_tasks_and_actors_counted) {
  auto o = attached_cluster(1);
  o.cpus = 2;
  process_cluster c{o};
  std::vector<prism::object_ref<int>> refs;
  for (int i = 0; i < 40; ++i)
    refs.push_back(prism::task(serve_one).remote(i));
  for (auto& r : refs)
    prism::get(r, 60s);
  auto a = prism::actor(metered_actor::create).remote();
  BOOST_REQUIRE_EQUAL(prism::get(a.task(&metered_actor::count).remote(5), 60s),
                      5);
  // Each process ships within a second; each node serves its own sum.
  auto sums = [&] {
    return std::make_tuple(
        summed(c, 2, "test_requests_total", {"op=\"even\""}),
        summed(c, 2, "test_requests_total", {"op=\"odd\""}),
        summed(c, 2, "test_requests_total", {"op=\"actor\""}),
        summed(c, 2, "test_request_seconds_count", {}),
        summed(c, 2, "test_queue_depth", {}));
  };
  auto expected = std::make_tuple(20.0, 20.0, 5.0, 40.0, 5.0);
  BOOST_CHECK(eventually(20s, [&] { return sums() == expected; }));
  auto text = get(c.metrics_url(0)) + get(c.metrics_url(1));
  BOOST_CHECK(contains(text, "# TYPE test_requests_total counter"));
  BOOST_CHECK(contains(text, "# TYPE test_request_seconds histogram"));
  BOOST_CHECK(
      contains(text, "# HELP test_queue_depth A test actor's queue depth"));

  // The actor's process dies: what it counted stays in its node's sum.
  BOOST_CHECK_THROW(prism::get(a.task(&metered_actor::die).remote(), 60s),
                    prism::error);
  BOOST_CHECK(eventually(10s, [&] {
    return summed(c, 2, "prism_worker_processes_failed_total", {}) >= 1;
  }));
  BOOST_CHECK_EQUAL(summed(c, 2, "test_requests_total", {"op=\"actor\""}), 5);
  BOOST_CHECK_EQUAL(summed(c, 2, "prism_user_metric_series_dropped_total", {}),
                    0);
}

BOOST_AUTO_TEST_CASE(a_drivers_own_updates_are_served_by_its_node) {
  process_cluster c{attached_cluster(0)};
  auto by_driver = [&] {
    return summed(c, 1, "test_requests_total", {"op=\"driver\""});
  };
  served().inc(3, {{"op", "driver"}});
  BOOST_CHECK(eventually(20s, [&] { return by_driver() == 3; }));
  // Its last updates are shipped as it ends, and what it counted stays.
  served().inc(4, {{"op", "driver"}});
  prism::shutdown();
  BOOST_CHECK_EQUAL(by_driver(), 7);
  BOOST_CHECK_EQUAL(summed(c, 1, "prism_user_metric_series_dropped_total", {}),
                    0);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace metrics_test
