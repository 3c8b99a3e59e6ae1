// Reading a node's log files for `prism logs` (raylet/log_files.hpp): which
// files a node's index names, which of them match, and a file's tail.

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "raylet/log_files.hpp"

namespace log_files_test {

using namespace prism::actors;
using prism::job_id;
namespace fs = std::filesystem;

struct scratch_dir {
  scratch_dir() {
    path = fs::temp_directory_path() /
           ("prism-log-files-test-" + std::to_string(::getpid()));
    fs::create_directories(path);
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream{path / name, std::ios::binary} << text;
  }
  std::string dir() const {
    return path.string();
  }
  fs::path path;
};

BOOST_AUTO_TEST_SUITE(log_files)

BOOST_AUTO_TEST_CASE(
    an_index_names_each_file_once_and_nothing_outside_its_directory) {
  scratch_dir d;
  d.write(
      "node-a.files",
      "worker-1-10.out\nworker-1-10.err\nworker-1-10.out\n../../etc/passwd\n"
      "\nworker-2-11.out\n");
  BOOST_TEST((indexed_files(d.dir(), "node-a.files") ==
              std::vector<std::string>{"worker-1-10.out", "worker-1-10.err",
                                       "worker-2-11.out"}));
  BOOST_TEST(indexed_files(d.dir(), "node-b.files").empty());
}

BOOST_AUTO_TEST_CASE(a_file_matches_by_job_pid_and_stream) {
  BOOST_TEST(log_file_matches("worker-1-10.out", job_id{}, 0, false));
  BOOST_TEST(log_file_matches("worker-1-10.out", job_id{1}, 10, false));
  BOOST_TEST(!log_file_matches("worker-1-10.out", job_id{1}, 10, true));
  BOOST_TEST(log_file_matches("worker-1-10.err", job_id{1}, 0, true));
  BOOST_TEST(!log_file_matches("worker-12-10.out", job_id{1}, 0, false));
  BOOST_TEST(!log_file_matches("worker-1-100.out", job_id{}, 10, false));
  BOOST_TEST(!log_file_matches("worker-1-10.out.1", job_id{}, 0, false));
  BOOST_TEST(!log_file_matches("fork-server-9.out", job_id{1}, 0, false));
}

BOOST_AUTO_TEST_CASE(a_piece_is_read_from_an_offset_or_the_start_of_its_tail) {
  scratch_dir d;
  d.write("w.out", "one\ntwo\nthree\nfour\n");
  auto whole = read_log_piece(d.dir(), "w.out", std::nullopt, 0, 1000);
  BOOST_REQUIRE(whole.has_value());
  BOOST_TEST(whole->bytes == "one\ntwo\nthree\nfour\n");
  BOOST_TEST(whole->size == 19u);
  auto tail = read_log_piece(d.dir(), "w.out", std::nullopt, 2, 1000);
  BOOST_TEST(tail->bytes == "three\nfour\n");
  BOOST_TEST(tail->offset == 8u);
  auto more_than_all = read_log_piece(d.dir(), "w.out", std::nullopt, 9, 1000);
  BOOST_TEST(more_than_all->bytes == "one\ntwo\nthree\nfour\n");
  auto from = read_log_piece(d.dir(), "w.out", 14, 0, 1000);
  BOOST_TEST(from->bytes == "four\n");
  auto capped = read_log_piece(d.dir(), "w.out", 0, 0, 5);
  BOOST_TEST(capped->bytes == "one\nt");
  // A file that shrank below the offset (rotated) is read from its start.
  auto shrunk = read_log_piece(d.dir(), "w.out", 500, 0, 1000);
  BOOST_TEST(shrunk->offset == 0u);
  BOOST_TEST(!read_log_piece(d.dir(), "missing.out", std::nullopt, 0, 10));
}

BOOST_AUTO_TEST_CASE(a_last_line_without_its_newline_counts_in_the_tail) {
  scratch_dir d;
  d.write("w.out", "one\ntwo\nthree");
  auto tail = read_log_piece(d.dir(), "w.out", std::nullopt, 2, 1000);
  BOOST_TEST(tail->bytes == "two\nthree");
}

BOOST_AUTO_TEST_CASE(a_tail_never_starts_further_back_than_an_answer_holds) {
  scratch_dir d;
  std::string line(99, 'x');
  line += '\n';
  std::string text;
  for (std::size_t i = 0; i < (max_log_answer_bytes / 100) + 1000; ++i)
    text += line;
  d.write("big.out", text);
  auto tail = read_log_piece(d.dir(), "big.out", std::nullopt, 1000000,
                             max_log_answer_bytes);
  BOOST_REQUIRE(tail.has_value());
  BOOST_TEST(tail->offset == text.size() - max_log_answer_bytes);
  BOOST_TEST(tail->bytes.size() == max_log_answer_bytes);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace log_files_test
