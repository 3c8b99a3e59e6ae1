// `prism start`: a head or a node of a cluster, in the foreground (--block)
// or as a daemon whose start-up the command waits for.

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <memory>
#include <optional>
#include <pthread.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "autoscaler/local_provider.hpp"
#include "boot/cluster_process.hpp"
#include "commands.hpp"
#include "common/secret.hpp"
#include "join/cluster_token.hpp"
#include "prism/error.hpp"
#include "prism/internal/autoscaler_config.hpp"
#include "session.hpp"

namespace prism::tools {

namespace {

using actors::cluster_process;

/// The status page's port when none is given (Ray's dashboard's, which
/// users' firewalls and tunnels already know).
constexpr int default_dashboard_port = 8265;

/// What `prism start` was given.
struct start_options {
  /// Start the head (control store and a node), or join `address`.
  bool head = false;
  std::string address;
  std::string host = "127.0.0.1";
  std::uint16_t port = 6380;
  std::string storage;
  /// Where a node keeps programs fetched from the control store.
  std::string program_cache;
  double num_cpus = 0;
  /// Custom resources as a JSON object, e.g. {"GPU": 1}.
  std::string resources;
  bool block = false;
  std::string log_level = "info";
  std::uint32_t heartbeat_interval_ms = 500;
  std::uint32_t connection_timeout_ms = 4000;
  /// How long a node keeps dialing a head it lost before it ends.
  std::uint32_t head_timeout_ms = 60000;
  /// Mutual TLS: this process's certificate and key, and the cluster CA's
  /// certificate; none takes PRISM_TLS_CERT, PRISM_TLS_KEY, PRISM_TLS_CA.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  /// The cluster token's file; none takes PRISM_AUTH_TOKEN, then
  /// PRISM_AUTH_TOKEN_FILE, then the session's token file.
  std::string token_file;
  /// Listen beyond loopback without TLS, with a warning at every start.
  bool insecure = false;
  /// Where other processes reach this one when it listens on 0.0.0.0.
  std::string node_ip;
  /// Head: the autoscaler's configuration file; empty: no autoscaler.
  std::string autoscaler;
  /// Worker processes' output files: the size past which one is rotated,
  /// and the rotated files kept.
  std::uint64_t worker_log_max_bytes = 100 * 1024 * 1024;
  std::uint32_t worker_log_backups = 5;
  /// The node's object store's shared memory; 0: 30% of the host's memory.
  std::uint64_t object_store_memory = 0;
  /// Where the node's store spills objects; empty: `spill` in the session
  /// directory.
  std::string spill_dir;
  /// The memory monitor's threshold: a share of the host's memory.
  double memory_usage_threshold = 0.95;
  std::uint32_t max_tasks = 100000;
  /// The metrics port: 0 picks a free one, -1 opens none.
  int metrics_export_port = 0;
  /// Let the metrics port listen beyond loopback without TLS or the token.
  bool metrics_insecure = false;
  /// Head: the status page's port: 0 picks a free one, -1 opens none; not
  /// given: `default_dashboard_port`, or a free one if that is taken.
  std::optional<int> dashboard_port;
  /// Whether --host was given (a node's default is the interface it
  /// reaches the head from).
  bool host_given = false;
};

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
  po.cfg.worker_log_max_bytes = o.worker_log_max_bytes;
  po.cfg.worker_log_backups = o.worker_log_backups;
  po.cfg.object_store_memory = o.object_store_memory;
  po.cfg.spill_dir = o.spill_dir;
  po.cfg.memory_usage_threshold = o.memory_usage_threshold;
  po.cfg.gcs_max_tasks = o.max_tasks;
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
  if (o.metrics_export_port < -1 || o.metrics_export_port > 65535)
    throw invalid_argument_error(
        "--metrics-export-port must be a port (0 picks a free one) or -1 "
        "(none), not " +
        std::to_string(o.metrics_export_port));
  po.metrics_port = std::nullopt;
  if (o.metrics_export_port >= 0)
    po.metrics_port = static_cast<std::uint16_t>(o.metrics_export_port);
  po.metrics_insecure = o.metrics_insecure;
  po.dashboard_port = std::nullopt;
  if (o.dashboard_port && !o.head)
    throw invalid_argument_error("--dashboard-port is for the head only");
  if (o.head) {
    auto port = o.dashboard_port.value_or(default_dashboard_port);
    if (port < -1 || port > 65535)
      throw invalid_argument_error(
          "--dashboard-port must be a port (0 picks a free one) or -1 "
          "(none), not " +
          std::to_string(port));
    if (port >= 0)
      po.dashboard_port = static_cast<std::uint16_t>(port);
    po.dashboard_port_fallback = !o.dashboard_port.has_value();
  }
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
    if (auto m = p.metrics_url(); !m.empty())
      out << "  metrics:  " << m << "\n";
    if (auto page = p.status_page_url(); !page.empty())
      out << "  status page: " << page << "\n";
    out << "  stop:     prism stop\n";
  } else {
    out << "Prism node " << p.node().hex().substr(0, 8)
        << " joined the head at " << o.address << " (pid " << ::getpid()
        << ")\n"
        << "  logs: " << s.log_path(name) << "\n";
    if (auto m = p.metrics_url(); !m.empty())
      out << "  metrics: " << m << "\n";
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
    // Submitted jobs keep their files in the session: a head started
    // again on this host finds them.
    if (o.head)
      po.session_dir = s.dir();
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
int await_daemon(int fd, pid_t daemon_pid, const std::string& log) {
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
  ::waitpid(daemon_pid, nullptr, 0);
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
  pid_t daemon_pid = ::fork();
  if (daemon_pid < 0) {
    std::cerr << "prism start: cannot fork: " << std::strerror(errno)
              << std::endl;
    return 1;
  }
  if (daemon_pid > 0) {
    ::close(fds[1]);
    auto name =
        o.head ? std::string{"head"} : "node-" + std::to_string(daemon_pid);
    return await_daemon(fds[0], daemon_pid, s.log_path(name));
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

/// Starts a head or a node; without `block`, as a daemon that outlives the
/// command, which returns once it runs. Returns the exit status.
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

// -- the command line ---------------------------------------------------------

/// Head or node, and where it listens; returns --host, whose absence gives
/// a node another default.
CLI::Option* add_role_options(CLI::App& start, start_options& so) {
  start.add_flag("--head", so.head,
                 "Run the control store and a node; others join it");
  start.add_option("--address", so.address,
                   "Join the head at HOST:PORT as a node");
  return start
      .add_option("--host", so.host,
                  "The interface to listen on. Beyond loopback it needs "
                  "--tls-cert, --tls-key and --tls-ca, or --insecure. Head "
                  "default: 127.0.0.1; node default: the interface it "
                  "reaches the head from")
      ->capture_default_str();
}

/// Who may connect: TLS, the cluster token, or neither.
void add_security_options(CLI::App& start, start_options& so) {
  start.add_option("--tls-cert", so.tls_cert,
                   "This host's certificate, signed by the cluster CA "
                   "(`prism cert issue`); default: PRISM_TLS_CERT");
  start.add_option("--tls-key", so.tls_key,
                   "The certificate's private key; default: PRISM_TLS_KEY");
  start.add_option("--tls-ca", so.tls_ca,
                   "The cluster CA's certificate; default: PRISM_TLS_CA");
  start.add_option("--token-file", so.token_file,
                   "The cluster token's file (default: PRISM_AUTH_TOKEN, "
                   "then PRISM_AUTH_TOKEN_FILE, then the token of a head "
                   "started on this host). A head with TLS or beyond "
                   "loopback makes one if none is given");
  start.add_flag("--insecure", so.insecure,
                 "Listen beyond loopback without TLS: anyone who reaches "
                 "the port can run code on every node (warns at each start)");
  start
      .add_option("--metrics-export-port", so.metrics_export_port,
                  "The port of this process's Prometheus metrics "
                  "(/metrics), on its host; 0 picks a free one, -1 opens "
                  "none")
      ->capture_default_str();
  start.add_option("--dashboard-port", so.dashboard_port,
                   "Head: the port of the status page, on its host; 0 picks "
                   "a free one, -1 opens none (default: " +
                       std::to_string(default_dashboard_port) +
                       ", or a free one if that is taken)");
  start.add_flag("--metrics-insecure", so.metrics_insecure,
                 "Let the metrics port listen beyond loopback without TLS "
                 "and without the cluster token: anyone who reaches it reads "
                 "the cluster's figures");
}

/// What the process is: its address, port, storage and resources.
void add_node_options(CLI::App& start, start_options& so) {
  start.add_option("--node-ip", so.node_ip,
                   "The address others reach this process at, when --host "
                   "is 0.0.0.0 (default: the interface of the default "
                   "route)");
  start.add_option("--port", so.port, "Head: the port (0 picks a free one)")
      ->capture_default_str();
  start.add_option("--storage", so.storage,
                   "Head: the control store's directory (default: a "
                   "temporary one, gone when the head stops)");
  start.add_option("--program-cache", so.program_cache,
                   "Where this node keeps the jobs' programs it fetched from "
                   "the control store (default: prism-<uid>/programs in the "
                   "temporary directory)");
  start
      .add_option("--num-cpus", so.num_cpus,
                  "CPUs of this node (default: its hardware threads)")
      ->check(CLI::NonNegativeNumber);
  start.add_option("--resources", so.resources,
                   "Custom resources of this node, as JSON: '{\"GPU\": 1}'");
  start
      .add_option("--worker-log-max-bytes", so.worker_log_max_bytes,
                  "A worker process's output file past this size is "
                  "rotated (x.out becomes x.out.1)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  start
      .add_option("--worker-log-backups", so.worker_log_backups,
                  "Rotated output files kept per worker process and stream")
      ->capture_default_str();
  start.add_option("--object-store-memory", so.object_store_memory,
                   "Bytes of this node's object store's shared memory, "
                   "which its worker processes read objects from in place "
                   "(default: 30% of the host's memory); objects past it "
                   "spill to --spill-dir");
  start.add_option("--spill-dir", so.spill_dir,
                   "Where the node's object store spills objects it cannot "
                   "hold in memory (default: spill in the session "
                   "directory)");
  start
      .add_option("--memory-usage-threshold", so.memory_usage_threshold,
                  "The share of the host's memory (or its cgroup's limit) "
                  "past which the node kills one worker process at a time, "
                  "before the kernel kills the node; 0 turns it off")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  start
      .add_option("--max-tasks", so.max_tasks,
                  "Head: the tasks whose events the control store keeps for "
                  "`prism list tasks`; past it, the oldest are forgotten")
      ->capture_default_str();
  start.add_option("--autoscaler", so.autoscaler,
                   "Head: grow and shrink the cluster as this JSON file "
                   "says (README, \"Autoscaler\")");
}

/// How it runs: in the foreground or not, its log, and its timeouts.
void add_run_options(CLI::App& start, start_options& so) {
  start.add_flag("--block", so.block,
                 "Stay in the foreground until SIGTERM or SIGINT (for "
                 "systemd or a container)");
  start
      .add_option("--log-level", so.log_level,
                  "trace, debug, info, warn, error or off")
      ->capture_default_str();
  start
      .add_option("--heartbeat-interval-ms", so.heartbeat_interval_ms,
                  "How often an idle connection sends a heartbeat")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  start
      .add_option("--connection-timeout-ms", so.connection_timeout_ms,
                  "A peer silent this long is dead (a frozen process)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  start
      .add_option("--head-timeout-ms", so.head_timeout_ms,
                  "Node: how long to dial a lost head before ending")
      ->capture_default_str();
}

} // namespace

void add_start_command(CLI::App& app, command_list& commands) {
  auto so = std::make_shared<start_options>();
  auto* start = app.add_subcommand(
      "start", "Start the head of a cluster (--head) or a node that joins one "
               "(--address); returns once it runs, unless --block");
  // In this order in `prism start --help`.
  auto* host = add_role_options(*start, *so);
  add_security_options(*start, *so);
  add_node_options(*start, *so);
  add_run_options(*start, *so);
  commands.push_back({start, [so, host] {
                        so->host_given = host->count() > 0;
                        return start_command(*so);
                      }});
}

} // namespace prism::tools
