// Programs kept by the control store: a node that does not hold a driver's
// program at its path fetches it from the control store by SHA-256, checks
// it and runs it; bad requests about programs get typed errors.

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <variant>
#include <vector>

#include <boost/test/unit_test.hpp>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "common/program_file.hpp"
#include "join/head_link.hpp"
#include "net/network.hpp"
#include "prism_command.hpp"
#include "protocol/programs.hpp"

namespace program_fetch_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in{path};
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Starts `program` as a driver of the cluster at `address`, its output in
/// `out`; returns its pid.
int start_driver(const std::string& program, const std::string& address,
                 const std::string& out) {
  std::vector<std::string> env_s{"PRISM_ADDRESS=" + address};
  for (char** e = environ; *e != nullptr; ++e)
    if (std::string_view{*e}.substr(0, 14) != "PRISM_ADDRESS=")
      env_s.emplace_back(*e);
  std::vector<char*> env;
  for (auto& e : env_s)
    env.push_back(e.data());
  env.push_back(nullptr);
  std::string argv0 = program;
  char* argv[] = {argv0.data(), nullptr};
  int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  BOOST_REQUIRE(fd >= 0);
  pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::execve(argv[0], argv, env.data());
    ::_exit(127);
  }
  ::close(fd);
  return pid;
}

/// An actor system that talks to a head as a cluster's processes do.
struct head_client {
  explicit head_client(const std::string& address) : sys{configured()} {
    head = prism::actors::connect_to_head(
        sys, prism::actors::parse_host_port(address, "the head"),
        prism::actors::head_entry{"", "test"}, 10000ms);
  }

  caf::actor_system_config& configured() {
    prism::actors::configure_cluster_process(cfg, 1, {});
    return cfg;
  }

  /// Asks the head; returns the answer, or the error's text.
  template <class Answer, class Message>
  std::variant<Answer, std::string> ask(Message msg) {
    std::variant<Answer, std::string> result{std::string{"no answer"}};
    caf::scoped_actor self{sys};
    self->request(head, 10s, std::move(msg))
        .receive([&](Answer& answer) { result = std::move(answer); },
                 [&](caf::error& err) { result = sys.render(err); });
    return result;
  }

  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::actor head;
};

/// The error's text, or "" if `answer` is no error.
template <class Answer>
std::string error_of(const std::variant<Answer, std::string>& answer) {
  auto* text = std::get_if<std::string>(&answer);
  return text != nullptr ? *text : std::string{};
}

std::string sha256_of(const std::string& bytes) {
  prism::actors::sha256_stream hash;
  hash.update(bytes.data(), bytes.size());
  return hash.finish();
}

} // namespace

BOOST_AUTO_TEST_SUITE(program_fetch)

// The driver deletes its own executable once attached: neither node finds
// the program at its path, both fetch it from the control store (to which
// the driver handed it), check it, and run its tasks from their copies.
BOOST_AUTO_TEST_CASE(nodes_run_a_program_they_fetched_from_the_control_store) {
  process_cluster s{bare_session()};
  auto head_cache = s.session_dir() + "/head-programs";
  auto far_cache = s.session_dir() + "/far-programs";
  auto address =
      s.start_head({"--num-cpus", "1", "--program-cache", head_cache});
  auto far =
      s.start_node(address, {"--num-cpus", "1", "--resources", R"({"far": 1})",
                             "--program-cache", far_cache});
  auto driver = s.session_dir() + "/driver";
  fs::copy_file(PRISM_FETCH_DRIVER_PATH, driver);
  auto digest = prism::actors::digest_file(driver);
  BOOST_REQUIRE(digest.error.empty());

  auto out = s.session_dir() + "/driver.out";
  auto status = s.await(start_driver(driver, address, out), 300s);
  auto said = read_text(out);
  BOOST_TEST(status == 0, "the driver ended with " << status << ": " << said);
  // 3 * (0 + 1 + 2 + 3), on each node.
  BOOST_TEST(contains(said, "sum=36"), said);
  BOOST_TEST(!fs::exists(driver));
  BOOST_TEST(fs::exists(head_cache + "/" + digest.sha256));
  BOOST_TEST(fs::exists(far_cache + "/" + digest.sha256));
  auto far_log = s.log_of("node-" + std::to_string(far));
  BOOST_TEST(contains(far_log, "fetching program " + digest.sha256), far_log);
  BOOST_TEST(s.sanitizer_reports().empty(), s.sanitizer_reports());
}

// Each malformed or out-of-order request about programs gets a typed error
// naming what is wrong, and the control store keeps serving.
BOOST_AUTO_TEST_CASE(bad_requests_about_programs_are_refused) {
  process_cluster s{bare_session()};
  auto address = s.start_head({"--num-cpus", "1"});
  head_client c{address};
  using prism::protocol::offer_program;
  using prism::protocol::program_bytes;
  using prism::protocol::program_part;
  using prism::protocol::read_program;

  BOOST_TEST(contains(error_of(c.ask<bool>(offer_program{"../../etc", 10})),
                      "is not 64 lower-case hex digits"));
  std::string absent(64, 'a');
  BOOST_TEST(contains(error_of(c.ask<bool>(offer_program{absent, 0})),
                      "keeps programs of 1 byte"));
  BOOST_TEST(contains(error_of(c.ask<bool>(program_part{absent, 0, "x"})),
                      "which nobody is handing over"));
  // Out of order, then bytes that hash to something else: each drops the
  // upload.
  BOOST_TEST(std::get<bool>(c.ask<bool>(offer_program{absent, 5})));
  BOOST_TEST(contains(error_of(c.ask<bool>(program_part{absent, 3, "xx"})),
                      "expected 0"));
  BOOST_TEST(std::get<bool>(c.ask<bool>(offer_program{absent, 5})));
  BOOST_TEST(contains(error_of(c.ask<bool>(program_part{absent, 0, "hello"})),
                      "not kept"));
  auto read = c.ask<program_bytes>(read_program{absent, 0, 100});
  BOOST_REQUIRE(error_of(read).empty());
  BOOST_TEST(!std::get<program_bytes>(read).ok);
  BOOST_TEST(contains(std::get<program_bytes>(read).error, "keeps no program"));
  auto bad_name = c.ask<program_bytes>(read_program{"../x", 0, 1});
  BOOST_TEST(
      contains(std::get<program_bytes>(bad_name).error, "is not a SHA-256"));

  // A program handed over whole is kept, read back, and not wanted again.
  std::string bytes = "#!/bin/sh\necho a program\n";
  auto sha = sha256_of(bytes);
  BOOST_TEST(std::get<bool>(c.ask<bool>(offer_program{sha, bytes.size()})));
  BOOST_TEST(std::get<bool>(c.ask<bool>(program_part{sha, 0, bytes})));
  BOOST_TEST(!std::get<bool>(c.ask<bool>(offer_program{sha, bytes.size()})));
  auto zero = c.ask<program_bytes>(read_program{sha, 0, 0});
  BOOST_TEST(contains(std::get<program_bytes>(zero).error, "0 bytes"));
  auto past = c.ask<program_bytes>(read_program{sha, 1000, 10});
  BOOST_TEST(contains(std::get<program_bytes>(past).error, "offset 1000"));
  auto whole = c.ask<program_bytes>(read_program{sha, 0, 1 << 20});
  BOOST_REQUIRE(error_of(whole).empty());
  BOOST_TEST(std::get<program_bytes>(whole).ok);
  BOOST_TEST(std::get<program_bytes>(whole).bytes == bytes);
  auto tail = c.ask<program_bytes>(read_program{sha, 10, 4});
  BOOST_TEST(std::get<program_bytes>(tail).bytes == bytes.substr(10, 4));

  BOOST_TEST(s.run({"status"}).status == 0);
  BOOST_TEST(s.sanitizer_reports().empty(), s.sanitizer_reports());
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace program_fetch_test
