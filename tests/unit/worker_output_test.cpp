// A node's reading of its worker processes' output (raylet/worker_output.hpp),
// through real pipes: this test writes what a worker process would.

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <unistd.h>

#include "common/output_source.hpp"
#include "raylet/worker_output.hpp"

namespace worker_output_test {

using prism::job_id;
using prism::actors::output_line;
using prism::actors::output_source_mark;
using prism::actors::worker_output;
namespace fs = std::filesystem;

/// A directory of its own, removed at the end.
struct scratch_dir {
  scratch_dir() {
    path = fs::temp_directory_path() /
           ("prism-worker-output-test-" + std::to_string(::getpid()) + "-" +
            std::to_string(counter++));
    fs::create_directories(path);
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path path;
  static inline int counter = 0;
};

std::string read_file(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, {}};
}

void write_to(int fd, const std::string& text) {
  BOOST_REQUIRE(::write(fd, text.data(), text.size()) ==
                static_cast<ssize_t>(text.size()));
}

std::string mark(const std::string& source) {
  return std::string{output_source_mark} + source + "\n";
}

/// Polls `done` until it holds or 10 s pass; returns its last answer.
template <class F>
bool eventually(F done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    // The pace of the poll; the deadline above bounds the wait.
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  }
  return true;
}

/// Waits until every stream `out` reads has ended.
void await_ended(const worker_output& out) {
  eventually([&] { return out.open_streams() == 0; });
  BOOST_REQUIRE(out.open_streams() == 0);
}

/// The lines waiting for job `job`.
std::vector<output_line> lines_of(std::vector<worker_output::batch> batches,
                                  job_id job,
                                  std::uint64_t* dropped = nullptr) {
  for (auto& b : batches)
    if (b.job == job) {
      if (dropped != nullptr)
        *dropped = b.dropped;
      return std::move(b.lines);
    }
  return {};
}

BOOST_AUTO_TEST_SUITE(worker_output_reading)

BOOST_AUTO_TEST_CASE(lines_go_to_files_and_to_the_driver_with_their_source) {
  scratch_dir dir;
  worker_output out{{.dir = dir.path.string()}};
  auto p = out.make_pipes();
  out.watch(*p, 4242, "worker-7", job_id{7});
  write_to(p->out_write, "before\n" + mark("square") + "first\nsec");
  write_to(p->out_write, "ond\n");
  write_to(p->err_write, mark("square") + "oops\n");
  p->close_write_ends();
  await_ended(out);
  auto lines = lines_of(out.take(), job_id{7});
  std::vector<output_line> expected{{"", 4242, false, "before"},
                                    {"square", 4242, false, "first"},
                                    {"square", 4242, false, "second"},
                                    {"square", 4242, true, "oops"}};
  // Each stream's lines in order; the two streams interleave as read.
  std::vector<output_line> out_lines, err_lines;
  for (auto& l : lines)
    (l.err ? err_lines : out_lines).push_back(l);
  BOOST_TEST((out_lines == std::vector<output_line>(expected.begin(),
                                                    expected.begin() + 3)));
  BOOST_TEST((err_lines == std::vector<output_line>{expected[3]}));
  // The files hold what the process wrote, without the marks.
  BOOST_TEST(read_file(dir.path / "worker-7-4242.out") ==
             "before\nfirst\nsecond\n");
  BOOST_TEST(read_file(dir.path / "worker-7-4242.err") == "oops\n");
}

BOOST_AUTO_TEST_CASE(
    a_mark_after_an_unended_line_leaves_it_to_the_source_before) {
  scratch_dir dir;
  worker_output out{{.dir = dir.path.string()}};
  auto p = out.make_pipes();
  out.watch(*p, 11, "worker-1", job_id{1});
  write_to(p->out_write, mark("a") + "progress..." + mark("b") + "done\n");
  p->close_write_ends();
  await_ended(out);
  auto lines = lines_of(out.take(), job_id{1});
  BOOST_TEST((lines == std::vector<output_line>{{"a", 11, false, "progress..."},
                                                {"b", 11, false, "done"}}));
}

BOOST_AUTO_TEST_CASE(a_line_left_unended_at_the_end_still_arrives) {
  scratch_dir dir;
  worker_output out{{.dir = dir.path.string()}};
  auto p = out.make_pipes();
  out.watch(*p, 12, "worker-1", job_id{1});
  write_to(p->out_write, "no newline");
  p->close_write_ends();
  await_ended(out);
  auto lines = lines_of(out.take(), job_id{1});
  BOOST_TEST(
      (lines == std::vector<output_line>{{"", 12, false, "no newline"}}));
  BOOST_TEST(read_file(dir.path / "worker-1-12.out") == "no newline\n");
}

BOOST_AUTO_TEST_CASE(a_line_longer_than_the_limit_arrives_in_pieces) {
  scratch_dir dir;
  worker_output out{{.dir = dir.path.string(), .max_line_bytes = 4}};
  auto p = out.make_pipes();
  out.watch(*p, 13, "worker-1", job_id{1});
  write_to(p->out_write, "abcdefghij\n");
  p->close_write_ends();
  await_ended(out);
  auto lines = lines_of(out.take(), job_id{1});
  BOOST_REQUIRE(lines.size() == 3u);
  BOOST_TEST(lines[0].text == "abcd");
  BOOST_TEST(lines[1].text == "efgh");
  BOOST_TEST(lines[2].text == "ij");
}

BOOST_AUTO_TEST_CASE(a_file_past_its_size_is_rotated_and_the_oldest_goes) {
  scratch_dir dir;
  worker_output out{
      {.dir = dir.path.string(), .max_file_bytes = 20, .backups = 2}};
  auto p = out.make_pipes();
  out.watch(*p, 14, "worker-1", job_id{1});
  // Ten lines of 10 bytes, read one at a time: a file rotates after every
  // second line.
  for (int i = 0; i < 10; ++i) {
    write_to(p->out_write, "line " + std::to_string(i) + "...\n");
    std::size_t seen = 0;
    eventually(
        [&] { return (seen = lines_of(out.take(), job_id{1}).size()) > 0; });
    BOOST_REQUIRE(seen == 1u);
  }
  p->close_write_ends();
  await_ended(out);
  auto base = dir.path / "worker-1-14.out";
  // The last two rotations are kept; the current file started empty after
  // the tenth line and, empty at the end, is gone.
  BOOST_TEST(read_file(fs::path{base.string() + ".1"}) ==
             "line 8...\nline 9...\n");
  BOOST_TEST(read_file(fs::path{base.string() + ".2"}) ==
             "line 6...\nline 7...\n");
  BOOST_TEST(!fs::exists(fs::path{base.string() + ".3"}));
}

BOOST_AUTO_TEST_CASE(
    lines_past_the_bound_are_dropped_and_counted_not_waited_for) {
  scratch_dir dir;
  worker_output out{{.dir = dir.path.string(), .max_pending_lines = 5}};
  auto p = out.make_pipes();
  out.watch(*p, 15, "worker-2", job_id{2});
  std::string text;
  for (int i = 0; i < 8; ++i) {
    text += 'l';
    text += std::to_string(i);
    text += '\n';
  }
  write_to(p->out_write, text);
  p->close_write_ends();
  await_ended(out);
  std::uint64_t dropped = 0;
  auto lines = lines_of(out.take(), job_id{2}, &dropped);
  BOOST_TEST(lines.size() == 5u);
  // The node's metrics count them too (prism_output_lines_dropped_total).
  BOOST_TEST(out.dropped_lines() == 3u);
  BOOST_TEST(dropped == 3u);
  // The file has every line.
  BOOST_TEST(read_file(dir.path / "worker-2-15.out") == text);
  // Taken, the count starts again.
  BOOST_TEST(out.take().empty());
}

BOOST_AUTO_TEST_CASE(the_raylet_is_told_once_until_it_takes_the_lines) {
  scratch_dir dir;
  worker_output out{{.dir = dir.path.string()}};
  std::atomic<int> told{0};
  out.on_pending([&] { ++told; });
  auto p = out.make_pipes();
  out.watch(*p, 16, "worker-3", job_id{3});
  auto await_lines = [&](std::size_t n) {
    std::vector<output_line> all;
    eventually([&] {
      if (told.load() > 0)
        for (auto& l : lines_of(out.take(), job_id{3}))
          all.push_back(l);
      return all.size() >= n;
    });
    return all;
  };
  write_to(p->out_write, "one\n");
  eventually([&] { return told.load() > 0; });
  BOOST_REQUIRE(told.load() == 1);
  // More lines before the take: no second call. Time is the subject here:
  // a second call would come within milliseconds of the lines.
  write_to(p->out_write, "two\n");
  write_to(p->out_write, "three\n");
  std::this_thread::sleep_for(std::chrono::milliseconds{50});
  BOOST_TEST(told.load() == 1);
  auto lines = await_lines(3);
  BOOST_TEST(lines.size() == 3u);
  // After the take, the next line tells again.
  write_to(p->out_write, "four\n");
  eventually([&] { return told.load() >= 2; });
  BOOST_TEST(told.load() == 2);
  p->close_write_ends();
  await_ended(out);
}

BOOST_AUTO_TEST_CASE(output_without_a_job_goes_to_files_only) {
  scratch_dir dir;
  worker_output out{{.dir = dir.path.string()}};
  auto p = out.make_pipes();
  out.watch(*p, 17, "fork-server", job_id{});
  write_to(p->out_write, "static initialisation says hello\n");
  p->close_write_ends();
  await_ended(out);
  BOOST_TEST(out.take().empty());
  BOOST_TEST(read_file(dir.path / "fork-server-17.out") ==
             "static initialisation says hello\n");
}

BOOST_AUTO_TEST_CASE(a_stream_that_says_nothing_leaves_no_file) {
  scratch_dir dir;
  worker_output out{{.dir = dir.path.string()}};
  auto p = out.make_pipes();
  out.watch(*p, 18, "worker-1", job_id{1});
  write_to(p->out_write, "x\n");
  p->close_write_ends();
  await_ended(out);
  BOOST_TEST(fs::exists(dir.path / "worker-1-18.out"));
  BOOST_TEST(!fs::exists(dir.path / "worker-1-18.err"));
}

BOOST_AUTO_TEST_CASE(a_file_is_made_and_listed_when_its_stream_first_speaks) {
  scratch_dir dir;
  worker_output out{{.dir = dir.path.string(), .index = "node-a.files"}};
  auto p = out.make_pipes();
  out.watch(*p, 19, "worker-1", job_id{1});
  // Read once: the streams are polled, and silent, they made nothing.
  out.read_now(std::chrono::seconds{10});
  BOOST_TEST(fs::is_empty(dir.path));
  write_to(p->err_write, "oops\n");
  BOOST_REQUIRE(eventually(
      [&] { return read_file(dir.path / "worker-1-19.err") == "oops\n"; }));
  BOOST_TEST(read_file(dir.path / "node-a.files") == "worker-1-19.err\n");
  p->close_write_ends();
  await_ended(out);
  BOOST_TEST(!fs::exists(dir.path / "worker-1-19.out"));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace worker_output_test
