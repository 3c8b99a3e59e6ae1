// The body of a worker process: what `prism::serve_if_worker` runs in a
// process its node started as a worker.

#include "boot/serve_worker.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "common/executor.hpp"
#include "common/log.hpp"
#include "common/processes.hpp"
#include "net/network.hpp"
#include "net/peers.hpp"
#include "owner/owner_directory.hpp"
#include "protocol/raylet_worker.hpp"
#include "worker/metrics_shipper.hpp"
#include "worker/worker.hpp"
#include "worker/worker_process.hpp"

namespace prism::actors {

namespace {

/// How long each step of registering may take.
constexpr auto register_timeout = std::chrono::seconds{10};

/// The code a worker process exits with when it cannot register.
constexpr int cannot_register = 70;

[[noreturn]] void fail(const std::string& door, const std::string& why) {
  // To the node's log: this process's stderr is its user's.
  component_logger("worker")->error(
      "prism worker (pid {}): cannot register with the raylet's door at {}: {}",
      static_cast<int>(::getpid()), door, why);
  exit_now(cannot_register);
}

/// What a worker process has before it registers.
struct prepared {
  std::string door_text;
  host_port door_address;
  /// Why it cannot serve at all; empty if it can.
  std::string failure;
  /// Never destroyed, as this struct: the process ends with _exit. The
  /// system reads its config for as long as it runs.
  caf::actor_system_config cfg;
  caf::actor_system* sys = nullptr;
  /// Where its peers reach it.
  std::string contact;
  /// Null until reached, and why it was not.
  caf::actor door;
  std::string unreached;
  /// The threads that will run its actors' methods.
  std::shared_ptr<executor> actor_pool;
};

/// Set by `configure_worker`: in a fork server, once for every worker it
/// forks.
prepared* ready_to_register = nullptr;

/// Connects `p` to its door.
void dial_door(prepared& p) {
  p.door =
      dial_published(*p.sys, p.door_address, register_timeout, p.unreached);
  if (!p.door && p.unreached.empty())
    p.unreached = "it publishes no door";
}

} // namespace

void configure_worker() {
  auto* p = new prepared;
  ready_to_register = p;
  // What fails is said once a launch has this process (a spare of a node
  // that stopped exits without a word).
  p->door_text = take_environment_variable(worker_door_variable);
  set_log_level("");
  try {
    p->door_address = parse_host_port(p->door_text, worker_door_variable);
    // Throws if the TLS files named are not there.
    configure_cluster_process(p->cfg, 2, network_settings{});
  } catch (const std::exception& e) {
    p->failure = e.what();
  }
}

void prepare_worker() {
  // A task that calls exit() ends this process with its code at once:
  // static destructors and atexit handlers must not run under the threads
  // that still serve (they race them into a crash). Registered last, this
  // runs first.
  ::on_exit([](int status, void*) { exit_now(status); }, nullptr);
  // A launch that brought a door of its own (the server had it not) is
  // configured by its own environment.
  if (ready_to_register == nullptr ||
      std::getenv(worker_door_variable) != nullptr)
    configure_worker();
  auto* p = ready_to_register;
  if (!p->failure.empty())
    return;
  p->sys = new caf::actor_system{p->cfg};
  // Owners and callers connect to this process directly.
  try {
    p->contact = listen_for_peers(*p->sys, p->door_address.host);
  } catch (const std::exception& e) {
    p->failure = e.what();
    return;
  }
  start_dialer(*p->sys, dial_timeout);
  p->actor_pool = make_actor_pool();
  dial_door(*p);
}

void serve_as_worker() {
  // A spare prepared before its launch came, and tries a door that did
  // not answer then once more.
  bool spare =
      ready_to_register != nullptr && ready_to_register->sys != nullptr;
  if (!spare)
    prepare_worker();
  auto& p = *ready_to_register;
  if (!p.failure.empty())
    fail(p.door_text, p.failure);
  if (!p.door && spare)
    dial_door(p);
  if (!p.door)
    fail(p.door_text, p.unreached);
  auto& sys = *p.sys;
  auto token = take_environment_variable(worker_token_variable);
  std::string why;
  caf::scoped_actor self{sys};
  protocol::worker_welcome welcome;
  self->request(
          p.door, register_timeout,
          protocol::worker_hello{token, static_cast<std::int32_t>(::getpid())})
      .receive([&](protocol::worker_welcome& w) { welcome = std::move(w); },
               [&](caf::error& err) { why = sys.render(err); });
  if (!welcome.raylet)
    fail(p.door_text, why);
  auto [worker, control] = spawn_worker(
      sys, worker_config{welcome.worker, welcome.node, welcome.raylet,
                         welcome.gcs, std::make_shared<owner_directory>(),
                         welcome.max_inline_bytes, p.actor_pool, welcome.job});
  self->monitor(worker);
  bool ready = false;
  self->request(
          p.door, register_timeout,
          protocol::worker_ready{std::move(token), worker, p.contact, control})
      .receive([&](bool ok) { ready = ok; },
               [&](caf::error& err) { why = sys.render(err); });
  if (!ready) {
    self->send_exit(worker, caf::exit_reason::user_shutdown);
    fail(p.door_text, why);
  }
  // The program's metrics go to the node every second.
  spawn_metrics_shipper(sys, welcome.raylet, welcome.worker);
  // Runs until the worker ends: its raylet stopped it or went away.
  self->receive([](const caf::down_msg&) {});
  exit_now(0);
}

} // namespace prism::actors
