// `prism start`: a head or a node of a cluster, in the foreground (--block)
// or as a daemon whose start-up the command waits for.

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <pthread.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "autoscaler/local_provider.hpp"
#include "cluster/cluster_process.hpp"
#include "cluster/cluster_token.hpp"
#include "cluster_commands.hpp"
#include "common/secret.hpp"
#include "prism/error.hpp"
#include "prism/internal/autoscaler_config.hpp"
#include "session.hpp"

namespace prism::tools {

namespace {

using actors::cluster_process;

resource_map parse_resources(const std::string& text) {
  if (text.empty())
    return {};
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw invalid_argument_error("--resources is not JSON: " +
                                 std::string{e.what()});
  }
  if (!j.is_object())
    throw invalid_argument_error(
        "--resources must be a JSON object of names and quantities, e.g. "
        "'{\"GPU\": 1}'");
  resource_map result;
  for (auto& [name, quantity] : j.items()) {
    if (!quantity.is_number())
      throw invalid_argument_error("--resources: the quantity of '" + name +
                                   "' is not a number");
    result[name] = quantity.get<double>();
  }
  return result;
}

cluster_process::options process_options(const start_options& o) {
  cluster_process::options po;
  po.cfg.num_cpus = o.num_cpus;
  po.cfg.resources = parse_resources(o.resources);
  po.cfg.storage_path = o.storage;
  po.program_cache = o.program_cache;
  po.cfg.log_level = o.log_level;
  po.listen = actors::host_port{o.host, o.port};
  if (!o.head && !o.host_given)
    po.listen.host.clear();
  po.node_ip = o.node_ip;
  po.insecure = o.insecure || actors::insecure_from_environment();
  po.net.tls =
      actors::resolve_tls(actors::tls_files{o.tls_cert, o.tls_key, o.tls_ca});
  if (po.net.tls.enabled())
    actors::check_tls_files(po.net.tls);
  po.token = actors::resolve_token("", o.token_file);
  if (!o.head)
    po.head = actors::parse_host_port(o.address, "--address");
  po.net.heartbeat_interval =
      std::chrono::milliseconds{o.heartbeat_interval_ms};
  po.net.connection_timeout =
      std::chrono::milliseconds{o.connection_timeout_ms};
  po.head_timeout = std::chrono::milliseconds{o.head_timeout_ms};
  if (!o.autoscaler.empty()) {
    if (!o.head)
      throw invalid_argument_error("--autoscaler is for the head only");
    po.autoscaler = internal::load_autoscaler_config(o.autoscaler);
    po.autoscaler_log_dir = session::open().dir();
  }
  // A node an autoscaler's provider started says which instance it is.
  if (const char* id = std::getenv(actors::instance_id_variable); id && *id)
    po.labels[actors::instance_label] = id;
  if (o.head)
    actors::check_exposure(o.host, po.net.tls.enabled(), po.insecure);
  return po;
}

std::string banner(const start_options& o, const cluster_process& p,
                   const session& s, const std::string& name, bool has_token) {
  std::ostringstream out;
  auto tls =
      actors::resolve_tls(actors::tls_files{o.tls_cert, o.tls_key, o.tls_ca})
          .enabled();
  auto contact = p.contact();
  auto host = contact.substr(0, contact.rfind(':'));
  if (!tls && !actors::is_loopback(host))
    out << "WARNING: " << actors::insecure_warning(host) << "\n";
  if (o.head) {
    auto address = p.contact();
    out << "Prism head started at " << address << " (pid " << ::getpid()
        << ", node " << p.node().hex().substr(0, 8) << ")\n"
        << "  logs:     " << s.log_path(name) << "\n"
        << "  a node:   prism start --address " << address << "\n"
        << "  a driver: export PRISM_ADDRESS=" << address << "\n";
    if (has_token)
      out << "  token:    " << actors::session_token_file()
          << " (nodes and drivers elsewhere: PRISM_AUTH_TOKEN or "
             "--token-file)\n";
    out << "  stop:     prism stop\n";
  } else {
    out << "Prism node " << p.node().hex().substr(0, 8)
        << " joined the head at " << o.address << " (pid " << ::getpid()
        << ")\n"
        << "  logs: " << s.log_path(name) << "\n";
  }
  return out.str();
}

/// The signals that end a started process; blocked in every thread, and
/// taken by one that waits for them.
sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

/// Writes all of `text` to `fd`.
void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += static_cast<std::size_t>(n);
  }
}

/// Runs a head or node in this process until a signal or, for a node, the
/// loss of its head. Says how the start went on `ready_fd` ("ok" or "error"
/// and the text), or on stdout and stderr if it is -1.
int run(const start_options& o, int ready_fd) {
  auto signals = stop_signals();
  ::pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto fail = [&](const std::string& why) {
    if (ready_fd >= 0)
      write_all(ready_fd, "error\nprism start: " + why + "\n");
    else
      std::cerr << "prism start: " << why << std::endl;
    return 1;
  };
  std::unique_ptr<cluster_process> p;
  auto s = session::open();
  auto name =
      o.head ? std::string{"head"} : "node-" + std::to_string(::getpid());
  bool has_token = false;
  try {
    auto po = process_options(o);
    if (o.head && po.token.empty() &&
        (po.net.tls.enabled() || !actors::is_loopback(o.host)))
      po.token = actors::random_secret();
    if (o.head && !po.token.empty())
      actors::write_token_file(actors::session_token_file(), po.token);
    has_token = o.head && !po.token.empty();
    p = o.head ? cluster_process::start_head(po)
               : cluster_process::start_node(po);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  s.add(name, ::getpid());
  if (o.head)
    s.set_head_address(p->contact());
  auto text = banner(o, *p, s, name, has_token);
  if (ready_fd >= 0) {
    write_all(ready_fd, "ok\n" + text);
    ::close(ready_fd);
  } else {
    std::cout << text << std::flush;
  }
  std::thread waiter{[&p, signals] {
    int sig = 0;
    ::sigwait(&signals, &sig);
    p->stop(std::string{"signal "} + ::strsignal(sig));
  }};
  auto why = p->wait();
  std::cerr << "prism: " << name << " stops: " << why << std::endl;
  // Wakes the waiter if the process ended for another reason.
  ::pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  p.reset();
  s.remove(name);
  return why.rfind("signal", 0) == 0 ? 0 : 1;
}

/// Reads what the daemon says of its start-up and passes it on.
int await_daemon(int fd, pid_t child, const std::string& log) {
  std::string said;
  char buf[512];
  for (;;) {
    auto n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    said.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  auto nl = said.find('\n');
  auto status = said.substr(0, nl);
  auto text = nl == std::string::npos ? "" : said.substr(nl + 1);
  if (status == "ok") {
    std::cout << text << std::flush;
    return 0;
  }
  if (status == "error") {
    std::cerr << text << std::flush;
  } else {
    std::cerr << "prism start: the process ended during start-up; see " << log
              << std::endl;
  }
  ::waitpid(child, nullptr, 0);
  return 1;
}

/// Starts `run` in a daemon: a new session, stdin from /dev/null, stdout
/// and stderr to the log.
int start_daemon(const start_options& o) {
  auto s = session::open();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    std::cerr << "prism start: " << std::strerror(errno) << std::endl;
    return 1;
  }
  pid_t child = ::fork();
  if (child < 0) {
    std::cerr << "prism start: cannot fork: " << std::strerror(errno)
              << std::endl;
    return 1;
  }
  if (child > 0) {
    ::close(fds[1]);
    auto name = o.head ? std::string{"head"} : "node-" + std::to_string(child);
    return await_daemon(fds[0], child, s.log_path(name));
  }
  ::close(fds[0]);
  ::setsid();
  auto name =
      o.head ? std::string{"head"} : "node-" + std::to_string(::getpid());
  int null = ::open("/dev/null", O_RDONLY);
  int log =
      ::open(s.log_path(name).c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (null >= 0)
    ::dup2(null, STDIN_FILENO);
  if (log >= 0) {
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
  }
  std::exit(run(o, fds[1]));
}

} // namespace

int start_command(const start_options& o) {
  if (o.head == !o.address.empty()) {
    std::cerr << "prism start: give either --head or --address HOST:PORT"
              << std::endl;
    return 2;
  }
  try {
    process_options(o); // refuses bad settings before anything starts
    auto s = session::open();
    if (o.head)
      for (auto& p : s.running())
        if (p.name == "head") {
          std::cerr << "prism start: a head runs on this host already (pid "
                    << p.pid << ", " << s.head_address().value_or("?")
                    << "); run `prism stop` first" << std::endl;
          return 1;
        }
  } catch (const std::exception& e) {
    std::cerr << "prism start: " << e.what() << std::endl;
    return 1;
  }
  return o.block ? run(o, -1) : start_daemon(o);
}

} // namespace prism::tools
