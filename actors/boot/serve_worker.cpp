// The body of a worker process: what `prism::serve_if_worker` runs in a
// process its node started as a worker.

#include "boot/serve_worker.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "common/executor.hpp"
#include "common/log.hpp"
#include "net/network.hpp"
#include "net/peers.hpp"
#include "owner/owner_directory.hpp"
#include "protocol/raylet_worker.hpp"
#include "worker/worker.hpp"
#include "worker/worker_process.hpp"

namespace prism::actors {

namespace {

/// How long each step of registering may take.
constexpr auto register_timeout = std::chrono::seconds{10};

/// The code a worker process exits with when it cannot register.
constexpr int cannot_register = 70;

[[noreturn]] void leave(int code) {
  spdlog::apply_all(
      [](const std::shared_ptr<spdlog::logger>& l) { l->flush(); });
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code);
}

[[noreturn]] void fail(const std::string& door, const std::string& why) {
  std::fprintf(stderr,
               "prism worker (pid %d): cannot register with the raylet's door "
               "at %s: %s\n",
               static_cast<int>(::getpid()), door.c_str(), why.c_str());
  leave(cannot_register);
}

std::string take_variable(const char* name) {
  const char* value = std::getenv(name);
  std::string result = value != nullptr ? value : "";
  // Processes this one starts are not workers.
  ::unsetenv(name);
  return result;
}

} // namespace

void serve_as_worker() {
  // A task that calls exit() ends this process with its code at once:
  // static destructors and atexit handlers must not run under the threads
  // that still serve (they race them into a crash). Registered last, this
  // runs first.
  ::on_exit([](int status, void*) { leave(status); }, nullptr);
  auto token = take_variable(worker_token_variable);
  auto door_text = take_variable(worker_door_variable);
  set_log_level("");
  host_port door_address;
  try {
    door_address = parse_host_port(door_text, worker_door_variable);
  } catch (const std::exception& e) {
    fail(door_text, e.what());
  }
  caf::actor_system_config cfg;
  configure_cluster_process(cfg, 2, network_settings{});
  // The system is never destroyed: the process ends with _exit.
  auto* sys = new caf::actor_system{cfg};
  // Owners and callers connect to this process directly.
  std::string contact;
  try {
    contact = listen_for_peers(*sys, door_address.host);
  } catch (const std::exception& e) {
    fail(door_text, e.what());
  }
  start_dialer(*sys, dial_timeout);
  std::string why;
  auto door = dial_published(*sys, door_address, register_timeout, why);
  if (!door)
    fail(door_text, why.empty() ? "it publishes no door" : why);
  caf::scoped_actor self{*sys};
  protocol::worker_welcome welcome;
  self->request(
          door, register_timeout,
          protocol::worker_hello{token, static_cast<std::int32_t>(::getpid())})
      .receive([&](protocol::worker_welcome& w) { welcome = std::move(w); },
               [&](caf::error& err) { why = sys->render(err); });
  if (!welcome.raylet)
    fail(door_text, why);
  auto worker = spawn_worker(
      *sys, worker_config{welcome.worker, welcome.node, welcome.raylet,
                          welcome.gcs, std::make_shared<owner_directory>(),
                          welcome.max_inline_bytes, make_actor_pool()});
  self->monitor(worker);
  bool ready = false;
  self->request(door, register_timeout,
                protocol::worker_ready{std::move(token), worker, contact})
      .receive([&](bool ok) { ready = ok; },
               [&](caf::error& err) { why = sys->render(err); });
  if (!ready) {
    self->send_exit(worker, caf::exit_reason::user_shutdown);
    fail(door_text, why);
  }
  // Runs until the worker ends: its raylet stopped it or went away.
  self->receive([](const caf::down_msg&) {});
  leave(0);
}

} // namespace prism::actors
