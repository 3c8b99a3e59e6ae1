// Mutual TLS between the processes of a cluster, the refusal of peers
// without the cluster's credentials, and the version fence, against real
// `prism` processes.

#include <algorithm>
#include <arpa/inet.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <optional>
#include <poll.h>
#include <set>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <boost/test/unit_test.hpp>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include <prism/prism.hpp>

#include "net/network.hpp"
#include "net/peers.hpp"
#include "net/tls.hpp"
#include "prism_command.hpp"
#include "raw_peer.hpp"
#include "test_hosts.hpp"

namespace security_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;

constexpr auto result_timeout = std::chrono::seconds{60};

int square(int x) {
  return x * x;
}

int sum_of_squares(int n) {
  std::vector<prism::object_ref<int>> refs;
  for (int i = 1; i <= n; ++i)
    refs.push_back(prism::task(square).remote(i));
  int sum = 0;
  for (auto x : prism::get(refs, result_timeout))
    sum += x;
  return sum;
}

/// `n` bytes of `c`: a value large enough to be read in parts.
std::string filled(int n, char c) {
  return std::string(static_cast<std::size_t>(n), c);
}

std::string node_here() {
  return prism::get_runtime_context().node.hex();
}

class counter {
public:
  static counter* create(int start) {
    return new counter(start);
  }

  int add(int x) {
    return total_ += x;
  }

private:
  explicit counter(int start) : total_(start) {}

  int total_;
};

PRISM_REMOTE(security_test::square, security_test::sum_of_squares,
             security_test::node_here, security_test::filled);
PRISM_REMOTE(security_test::counter::create, &security_test::counter::add);

using namespace security_test;

namespace {

namespace fs = std::filesystem;

/// A cluster CA with certificates for the processes on this host and a
/// driver, and a second CA with one of its own, made by `prism cert`.
struct certificates {
  certificates() {
    char pattern[] = "/tmp/prism-certs-XXXXXX";
    dir = ::mkdtemp(pattern);
    process_cluster s{bare_session()};
    for (auto args : std::vector<std::vector<std::string>>{
             {"cert", "init", dir + "/ca"},
             {"cert", "issue", dir + "/ca", "127.0.0.1"},
             {"cert", "issue", dir + "/ca", "driver"},
             {"cert", "init", dir + "/other"},
             {"cert", "issue", dir + "/other", "intruder"}}) {
      auto r = s.run(args);
      BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    }
  }

  ~certificates() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  /// `prism start` flags of the certificate `name` of the CA `ca`.
  std::vector<std::string> flags(const std::string& name,
                                 const std::string& ca = "ca") const {
    auto f = files(name, ca);
    return {"--tls-cert", f.cert, "--tls-key", f.key, "--tls-ca", f.ca};
  }

  prism::actors::tls_files files(const std::string& name,
                                 const std::string& ca = "ca",
                                 const std::string& trusted = "ca") const {
    return {dir + "/" + ca + "/" + name + ".pem",
            dir + "/" + ca + "/" + name + ".key",
            dir + "/" + trusted + "/ca.pem"};
  }

  /// A driver's settings with the certificate `name` of `ca`, trusting the
  /// CA `trusted`.
  prism::config driver(const std::string& name, const std::string& ca = "ca",
                       const std::string& trusted = "ca") const {
    auto f = files(name, ca, trusted);
    prism::config cfg;
    cfg.tls_cert = f.cert;
    cfg.tls_key = f.key;
    cfg.tls_ca = f.ca;
    cfg.gcs_reconnect_timeout_ms = 10000;
    return cfg;
  }

  std::string dir;
};

/// Why attaching a driver with `cfg` to `address` fails ("" if it does
/// not).
std::string attach_failure(prism::config cfg, const std::string& address) {
  cfg.address = address;
  try {
    prism::init(cfg);
  } catch (const std::exception& e) {
    return e.what();
  }
  prism::shutdown();
  return "";
}

/// The kind of error attaching a driver with `cfg` to `address` fails with
/// (`errc::ok` if it does not), and its text in `why`.
prism::errc attach_error(prism::config cfg, const std::string& address,
                         std::string& why) {
  cfg.address = address;
  try {
    prism::init(cfg);
  } catch (const prism::error& e) {
    why = e.what();
    return e.code();
  }
  prism::shutdown();
  why.clear();
  return prism::errc::ok;
}

/// Sets environment variable `name` to `value` for its scope.
struct scoped_variable {
  scoped_variable(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name))
      old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~scoped_variable() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  scoped_variable(const scoped_variable&) = delete;
  scoped_variable& operator=(const scoped_variable&) = delete;

private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string read_text(const std::string& path) {
  std::ifstream in{path};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

/// CPU time (user and system) process `pid` used so far.
std::chrono::milliseconds cpu_time_of(int pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  // The fields after the command's closing parenthesis; utime and stime are
  // the 14th and 15th of the line.
  std::istringstream fields{text.substr(text.rfind(')') + 2)};
  std::string field;
  long ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i)
    if (i >= 14)
      ticks += std::stol(field);
  return std::chrono::milliseconds{ticks * 1000 / ::sysconf(_SC_CLK_TCK)};
}

/// Whether `prism status` with `env` lists `alive` live nodes and no dead
/// one.
bool status_shows(process_cluster& s, const std::string& address, int alive) {
  auto r = s.run({"status", "--address", address}, 30s);
  return r.status == 0 &&
         contains(r.out, "Nodes: " + std::to_string(alive) + " alive, 0 dead");
}

/// Sets the PRISM_TLS_* variables of this process (which `prism status`
/// and any process it starts inherit) for its scope.
struct tls_environment {
  explicit tls_environment(const prism::actors::tls_files& f) {
    ::setenv(prism::actors::tls_cert_variable, f.cert.c_str(), 1);
    ::setenv(prism::actors::tls_key_variable, f.key.c_str(), 1);
    ::setenv(prism::actors::tls_ca_variable, f.ca.c_str(), 1);
  }
  ~tls_environment() {
    ::unsetenv(prism::actors::tls_cert_variable);
    ::unsetenv(prism::actors::tls_key_variable);
    ::unsetenv(prism::actors::tls_ca_variable);
  }
};

} // namespace

/// An actor of a build of another wire version, published for a dial.
class echo_actor : public caf::event_based_actor {
public:
  using caf::event_based_actor::event_based_actor;

  caf::behavior make_behavior() override {
    return {[](int x) { return x; }};
  }
};

BOOST_AUTO_TEST_SUITE(cluster_security)

BOOST_AUTO_TEST_CASE(tasks_actors_and_a_node_work_over_mutual_tls) {
  certificates certs;
  auto o = attached_cluster(0);
  o.flags = certs.flags("127.0.0.1");
  o.driver = certs.driver("driver");
  process_cluster cluster{o};
  // Tasks in worker processes of the head's node, nested ones among them.
  BOOST_TEST(prism::get(prism::task(sum_of_squares).remote(10),
                        result_timeout) == 385);
  auto head_node = prism::get(prism::task(node_here).remote(), result_timeout);
  // A node joins over TLS and takes the work that needs it: the driver,
  // its worker processes and the head reach each other there directly.
  cluster.add_node({"--resources", R"({"far": 4})"});
  const prism::resource_map far{{"far", 1}};
  auto far_node = prism::get(prism::task(node_here).resources(far).remote(),
                             result_timeout);
  BOOST_TEST(far_node != head_node);
  BOOST_TEST(prism::get(prism::task(sum_of_squares).resources(far).remote(6),
                        result_timeout) == 91);
  auto c = prism::actor(counter::create).resources(far).remote(100);
  std::vector<prism::object_ref<int>> totals;
  for (int i = 1; i <= 20; ++i)
    totals.push_back(c.task(&counter::add).remote(1));
  BOOST_TEST(prism::get(totals, result_timeout).back() == 120);
  // A large object made there comes over the encrypted connection: the
  // node opens no bulk port.
  constexpr int size = (3 << 20) + 5;
  auto bulk_before = prism::testing::bulk_reads();
  auto big = prism::task(filled).resources(far).remote(size, 'q');
  BOOST_TEST(prism::get(big, result_timeout) == filled(size, 'q'));
  BOOST_TEST(prism::testing::bulk_reads() == bulk_before);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_CASE(a_driver_without_a_certificate_is_refused) {
  certificates certs;
  process_cluster s{bare_session()};
  auto address = s.start_head(certs.flags("127.0.0.1"));
  auto why = attach_failure(prism::config{}, address);
  BOOST_TEST(contains(why, "requires TLS"), why);
  // A node without one is refused too, and says so.
  auto r = s.run({"start", "--address", address, "--num-cpus", "1"});
  BOOST_TEST(r.status == 1);
  BOOST_TEST(contains(r.err, "requires TLS"), r.err);
}

BOOST_AUTO_TEST_CASE(a_head_with_a_certificate_of_another_ca_is_refused) {
  certificates certs;
  process_cluster s{bare_session()};
  auto address = s.start_head(certs.flags("127.0.0.1"));
  // The driver trusts only the other CA, so it refuses the head.
  auto why =
      attach_failure(certs.driver("intruder", "other", "other"), address);
  BOOST_TEST(contains(why, "not signed by this process's cluster CA"), why);
}

BOOST_AUTO_TEST_CASE(a_client_with_a_certificate_of_another_ca_is_refused) {
  certificates certs;
  process_cluster s{bare_session()};
  auto address = s.start_head(certs.flags("127.0.0.1"));
  // Its own check refuses a certificate the CA it trusts did not sign.
  auto why = attach_failure(certs.driver("intruder", "other", "ca"), address);
  BOOST_TEST(contains(why, "does not verify against the CA certificate"), why);
  // A client that skips that check is refused by the head.
  int fd = connect_to(address);
  BOOST_REQUIRE(fd >= 0);
  prism::actors::tls_client client{certs.files("intruder", "other", "ca")};
  auto deadline = std::chrono::steady_clock::now() + 5s;
  auto handshake = client.handshake(fd, deadline);
  std::string refused = handshake;
  if (handshake.empty()) {
    char byte = 0;
    refused = client.read(&byte, 1, deadline);
  }
  ::close(fd);
  BOOST_TEST(contains(refused, "refused this process's certificate"), refused);
  BOOST_TEST(eventually(10s, [&] {
    return contains(s.log_of("head"), "refused a connection from");
  }));
  // The head still serves the cluster's own.
  tls_environment env{certs.files("driver")};
  BOOST_TEST(status_shows(s, address, 1));
}

BOOST_AUTO_TEST_CASE(a_plain_client_hears_nothing_from_a_tls_head) {
  certificates certs;
  process_cluster s{bare_session()};
  auto address = s.start_head(certs.flags("127.0.0.1"));
  int fd = connect_to(address);
  BOOST_REQUIRE(fd >= 0);
  // What a plain BASP client would send: its handshake header.
  std::string basp(32, '\0');
  basp[0] = 0x01;
  BOOST_REQUIRE(::send(fd, basp.data(), basp.size(), MSG_NOSIGNAL) == 32);
  auto heard = heard_from(fd, 5s);
  ::close(fd);
  // At most a TLS alert (record type 21), and never a BASP handshake.
  BOOST_TEST((heard.empty() || heard[0] == 21), heard.size());
  tls_environment env{certs.files("driver")};
  BOOST_TEST(status_shows(s, address, 1));
}

BOOST_AUTO_TEST_CASE(a_tls_driver_is_told_that_a_plain_head_speaks_no_tls) {
  certificates certs;
  process_cluster s{bare_session()};
  auto address = s.start_head({"--num-cpus", "1"});
  auto why = attach_failure(certs.driver("driver"), address);
  BOOST_TEST(contains(why, "does not speak TLS"), why);
}

// CAF 0.17.6's own TLS transport spun the multiplexer's thread at 100% CPU
// while any peer held a connection in its handshake, and the broker's
// connection timeout on such a connection dropped another peer's
// connection once it closed. Silent connections and stalled handshakes
// now cost no CPU, end by their deadline, and touch nobody else.
BOOST_AUTO_TEST_CASE(stalled_handshakes_cost_no_cpu_and_drop_no_peer) {
  certificates certs;
  process_cluster s{bare_session()};
  auto flags = certs.flags("127.0.0.1");
  flags.insert(flags.end(), {"--connection-timeout-ms", "1000",
                             "--heartbeat-interval-ms", "200"});
  auto address = s.start_head(flags);
  s.start_node(address, flags);
  int head = s.pid_of("head");
  auto before = cpu_time_of(head);
  auto start = std::chrono::steady_clock::now();
  std::vector<int> stalled;
  for (int i = 0; i < 20; ++i) {
    int fd = connect_to(address);
    BOOST_REQUIRE(fd >= 0);
    // Half of them send the first bytes of a ClientHello, then stall.
    if (i % 2 == 1) {
      const char hello[] = {0x16, 0x03, 0x01, 0x00, 0x40, 0x01};
      ::send(fd, hello, sizeof(hello), MSG_NOSIGNAL);
    }
    stalled.push_back(fd);
  }
  // Time itself is the subject: the connections stay open past the
  // connection timeout, twice over, while the head's CPU time is counted.
  std::this_thread::sleep_for(2500ms);
  for (int fd : stalled)
    ::close(fd);
  auto elapsed = std::chrono::steady_clock::now() - start;
  auto used = cpu_time_of(head) - before;
  BOOST_TEST_MESSAGE(
      "head CPU during the stall: "
      << used.count() << " ms of "
      << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()
      << " ms");
  BOOST_TEST(used <
             std::chrono::duration_cast<std::chrono::milliseconds>(elapsed) /
                 4);
  tls_environment env{certs.files("driver")};
  BOOST_TEST(status_shows(s, address, 2));
  BOOST_TEST(!contains(s.log_of("head"), "is dead"));
}

BOOST_AUTO_TEST_CASE(listening_beyond_loopback_needs_tls_or_insecure) {
  certificates certs;
  process_cluster s{bare_session()};
  auto r = s.run({"start", "--head", "--host", "0.0.0.0", "--port", "0"});
  BOOST_TEST(r.status == 1);
  BOOST_TEST(contains(r.err, "refusing to listen on '0.0.0.0' without TLS"),
             r.err);
  BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  auto insecure = s.run({"start", "--head", "--host", "0.0.0.0", "--port", "0",
                         "--num-cpus", "1", "--insecure"});
  BOOST_TEST(insecure.status == 0, insecure.err);
  BOOST_TEST(contains(insecure.out, "WARNING: INSECURE"), insecure.out);
  BOOST_TEST(contains(s.log_of("head"), "INSECURE"));
  s.run({"stop"});
  auto secure = s.run(
      {"start", "--head", "--host", "0.0.0.0", "--port", "0", "--num-cpus", "1",
       "--tls-cert", certs.files("127.0.0.1").cert, "--tls-key",
       certs.files("127.0.0.1").key, "--tls-ca", certs.files("127.0.0.1").ca});
  BOOST_TEST(secure.status == 0, secure.err);
  BOOST_TEST(!contains(secure.out, "INSECURE"));
}

BOOST_AUTO_TEST_CASE(credentials_that_cannot_be_used_are_refused_at_start) {
  certificates certs;
  process_cluster s{bare_session()};
  auto f = certs.files("127.0.0.1");
  auto missing = s.run({"start", "--head", "--port", "0", "--tls-cert", f.cert,
                        "--tls-key", f.key});
  BOOST_TEST(missing.status == 1);
  BOOST_TEST(contains(missing.err, "missing: the cluster CA's certificate"),
             missing.err);
  auto mismatched =
      s.run({"start", "--head", "--port", "0", "--tls-cert", f.cert,
             "--tls-key", certs.files("driver").key, "--tls-ca", f.ca});
  BOOST_TEST(mismatched.status == 1);
  BOOST_TEST(contains(mismatched.err, "cannot use the private key"),
             mismatched.err);
  BOOST_TEST(contains(mismatched.err, "mismatch"), mismatched.err);
  auto again = s.run({"cert", "init", certs.dir + "/ca"});
  BOOST_TEST(again.status == 1);
  BOOST_TEST(contains(again.err, "holds a CA already"), again.err);
  auto bad_name = s.run({"cert", "issue", certs.dir + "/ca", "../escape"});
  BOOST_TEST(bad_name.status == 1);
  BOOST_TEST((fs::status(f.key).permissions() ==
              (fs::perms::owner_read | fs::perms::owner_write)));
}

// A right certificate is not enough: joining and attaching also take the
// cluster token, which a TLS head makes when none is given.
BOOST_AUTO_TEST_CASE(a_missing_or_wrong_token_is_refused_and_logged) {
  certificates certs;
  process_cluster s{bare_session()};
  auto address = s.start_head(certs.flags("127.0.0.1"));
  auto token_file = s.session_dir() + "/token";
  BOOST_REQUIRE(fs::exists(token_file));
  BOOST_TEST((fs::status(token_file).permissions() ==
              (fs::perms::owner_read | fs::perms::owner_write)));
  auto token = read_text(token_file);
  BOOST_TEST(token.size() == 64u);
  // This process's own session directory holds no token.
  char empty_dir[] = "/tmp/prism-no-session-XXXXXX";
  scoped_variable no_session{"PRISM_SESSION_DIR", ::mkdtemp(empty_dir)};
  std::string why;
  BOOST_TEST((attach_error(certs.driver("driver"), address, why) ==
              prism::errc::permission_denied));
  BOOST_TEST(contains(why, "presented no cluster token"), why);
  auto wrong = certs.driver("driver");
  wrong.auth_token = std::string(64, 'f');
  BOOST_TEST(
      (attach_error(wrong, address, why) == prism::errc::permission_denied));
  BOOST_TEST(contains(why, "presented a wrong cluster token"), why);
  BOOST_TEST(eventually(10s, [&] {
    auto log = s.log_of("head");
    return contains(log, "refused a driver") &&
           contains(log, "presented a wrong cluster token");
  }));
  // The right token, from the environment, from a file, and from the head's
  // session directory.
  {
    scoped_variable env{"PRISM_AUTH_TOKEN", token};
    BOOST_TEST(
        (attach_error(certs.driver("driver"), address, why) == prism::errc::ok),
        why);
  }
  auto from_file = certs.driver("driver");
  from_file.auth_token_file = token_file;
  BOOST_TEST((attach_error(from_file, address, why) == prism::errc::ok), why);
  {
    scoped_variable session{"PRISM_SESSION_DIR", s.session_dir()};
    BOOST_TEST(
        (attach_error(certs.driver("driver"), address, why) == prism::errc::ok),
        why);
  }
  // A node with a wrong token is refused in one line; one on this host
  // finds the head's token, and joins.
  auto wrong_file = s.session_dir() + "/wrong-token";
  std::ofstream{wrong_file} << std::string(64, 'e') << "\n";
  auto flags = certs.flags("127.0.0.1");
  flags.insert(flags.end(), {"--num-cpus", "1"});
  auto refused_flags = flags;
  refused_flags.insert(refused_flags.end(), {"--token-file", wrong_file});
  std::vector<std::string> refused{"start", "--address", address};
  refused.insert(refused.end(), refused_flags.begin(), refused_flags.end());
  auto r = s.run(refused);
  BOOST_TEST(r.status == 1);
  BOOST_TEST(contains(r.err, "refused this process's cluster token"), r.err);
  BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  auto node = s.start_node(address, flags);
  scoped_variable tls_cert{prism::actors::tls_cert_variable,
                           certs.files("driver").cert};
  scoped_variable tls_key{prism::actors::tls_key_variable,
                          certs.files("driver").key};
  scoped_variable tls_ca{prism::actors::tls_ca_variable,
                         certs.files("driver").ca};
  BOOST_TEST(status_shows(s, address, 2));
  // The token appears in no log.
  BOOST_TEST(!contains(s.log_of("head"), token));
  BOOST_TEST(!contains(s.log_of("node-" + std::to_string(node)), token));
}

// Submitting a job runs a program on the head's host: it takes what every
// client takes, a certificate of the cluster's CA over TLS and the cluster
// token. From another host, without either, nothing runs.
BOOST_AUTO_TEST_CASE(a_job_from_another_host_needs_a_certificate_and_token) {
  certificates certs;
  test_hosts hosts;
  process_cluster issuer{bare_session()};
  auto issued =
      issuer.run({"cert", "issue", certs.dir + "/ca", hosts.address_a()});
  BOOST_REQUIRE_MESSAGE(issued.status == 0, issued.err);
  auto head_options = bare_session();
  head_options.command = hosts.prism_a();
  process_cluster head{head_options};
  auto flags = certs.flags(hosts.address_a());
  flags.insert(flags.end(), {"--host", hosts.address_a(), "--num-cpus", "1"});
  auto address = head.start_head(flags);
  auto token = read_text(head.session_dir() + "/token");
  BOOST_REQUIRE_EQUAL(token.size(), 64u);
  auto client_options = bare_session();
  client_options.command = hosts.prism_b();
  process_cluster client{client_options};
  std::vector<std::string> submit{"job",   "submit", "--address",
                                  address, "--",     "/bin/true"};
  {
    // The token, but no certificate: the head speaks only TLS.
    scoped_variable with_token{"PRISM_AUTH_TOKEN", token};
    auto r = client.run(submit);
    BOOST_TEST(r.status == 1, r.out);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
  }
  {
    // A certificate, but no token.
    tls_environment env{certs.files("driver")};
    auto r = client.run(submit);
    BOOST_TEST(r.status == 1, r.out);
    BOOST_TEST(contains(r.err, "presented no cluster token"), r.err);
  }
  BOOST_TEST(eventually(
      10s, [&] { return contains(head.log_of("head"), "refused a job"); }));
  tls_environment env{certs.files("driver")};
  auto listed = head.run({"job", "list"});
  BOOST_TEST(contains(listed.out, "0 jobs"), listed.out + listed.err);
  // Both, from the other host: the job runs on the head's.
  scoped_variable with_token{"PRISM_AUTH_TOKEN", token};
  auto r = client.run(submit);
  BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
  auto id = r.out.substr(r.out.find("job-"), 16);
  BOOST_TEST(eventually(60s, [&] {
    auto status = client.run({"job", "status", id, "--address", address});
    return contains(status.out, "SUCCEEDED");
  }));
}

BOOST_AUTO_TEST_CASE(a_head_on_loopback_without_tls_asks_no_token) {
  process_cluster s{bare_session()};
  auto address = s.start_head({"--num-cpus", "1"});
  BOOST_TEST(!fs::exists(s.session_dir() + "/token"));
  char empty_dir[] = "/tmp/prism-no-session-XXXXXX";
  scoped_variable no_session{"PRISM_SESSION_DIR", ::mkdtemp(empty_dir)};
  std::string why;
  BOOST_TEST((attach_error(prism::config{}, address, why) == prism::errc::ok),
             why);
}

BOOST_AUTO_TEST_CASE(a_peer_of_another_wire_version_is_refused_naming_both) {
  // An old build's process: CAF with another wire version, publishing an
  // actor on loopback.
  caf::actor_system_config old_cfg;
  old_cfg.load<caf::io::middleman>();
  old_cfg.set("middleman.app-identifiers",
              std::vector<std::string>{"prism-wire-1"});
  caf::actor_system old_sys{old_cfg};
  // (A class: CAF 0.17.6's spawn of a function without arguments reads
  // through a null pointer, which UBSan reports.)
  auto published = old_sys.spawn<echo_actor>();
  auto port = old_sys.middleman().publish(published, 0, "127.0.0.1");
  BOOST_REQUIRE(port);
  caf::actor_system_config cfg;
  prism::actors::configure_cluster_process(cfg, 1, {});
  caf::actor_system sys{cfg};
  prism::actors::start_dialer(sys, prism::actors::dial_timeout);
  std::string why;
  auto dialed = prism::actors::dial_published(
      sys, prism::actors::host_port{"127.0.0.1", *port}, 5000ms, why);
  BOOST_TEST(!dialed);
  BOOST_TEST(contains(why, "it speaks prism-wire-1"), why);
  BOOST_TEST(contains(why, std::string{"this build speaks "} +
                               prism::actors::wire_version),
             why);
  prism::actors::stop_peers(sys);
  caf::anon_send_exit(published, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace security_test
