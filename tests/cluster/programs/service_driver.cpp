// A driver for the cluster suite's test of named services. It attaches to
// the cluster named by PRISM_ADDRESS, says "ready" on stdout, and waits for
// a line on its stdin: then it gets the detached actor "svc" of namespace
// "services", or creates it if there is none, calls it once, and prints
// "actor=<id> visit=<n>", n counting the actor's calls from every driver.
//
// With the argument `controls` it instead checks, on the cluster, the
// controls a long-lived service needs, a line each: a running task
// cancelled ("cancel_running=ok"), one cancelled with force
// ("cancel_force=ok"), an asynchronous actor serving 500 calls that each
// wait 200 ms at once ("async=ok"), and a health check in a concurrency
// group of its own answering while slow calls fill the default group
// ("health=ok").
//
//   service_driver [controls]

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <prism/prism.hpp>

namespace service_driver {

/// A service that counts its visitors.
class service {
public:
  static service* create() {
    return new service;
  }

  int visit() {
    return ++visits_;
  }

private:
  int visits_ = 0;
};

/// Spins until cancelled (60 s at most); returns whether it saw it.
int spin() {
  prism::kv::put("controls:spin", "started");
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds{60};
  while (!prism::is_cancelled()) {
    if (std::chrono::steady_clock::now() > until)
      return 0;
    // The task's own work between looks at its flag, bounded above.
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  }
  return 1;
}

/// Sleeps 60 s, never looking at its cancellation.
int stuck() {
  prism::kv::put("controls:stuck", "started");
  // Time is the subject: a task that never returns in the test's span,
  // which only `force` stops.
  std::this_thread::sleep_for(std::chrono::seconds{60});
  return 1;
}

/// A service whose calls wait without a thread.
class gateway {
public:
  static gateway* create() {
    return new gateway;
  }

  /// Waits `ms` without a thread: the wait itself is what is served.
  prism::future<int> wait_ms(int ms) {
    co_await prism::sleep_for(std::chrono::milliseconds{ms});
    co_return ms;
  }

  /// Holds its thread for `ms`: a slow call, whose time is the subject.
  int busy_ms(int ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds{ms});
    return ms;
  }

  bool health() const {
    return true;
  }
};

bool get_throws_cancelled(const prism::object_ref<int>& ref) {
  try {
    prism::get(ref, std::chrono::seconds{60});
  } catch (const prism::task_cancelled_error&) {
    return true;
  }
  return false;
}

/// Waits (60 s at most) until a task set `key`.
void await_key(const std::string& key) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds{60};
  while (!prism::kv::exists(key) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
}

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// The controls of a long-lived service, on a cluster.
void check_controls() {
  // A running task, asked to stop: it sees it (its worker goes on).
  auto running = prism::task(spin).remote();
  await_key("controls:spin");
  prism::cancel(running);
  say(get_throws_cancelled(running) ? "cancel_running=ok"
                                    : "cancel_running=failed");
  // One that never looks: force kills its worker process.
  auto forced = prism::task(stuck).remote();
  await_key("controls:stuck");
  auto start = std::chrono::steady_clock::now();
  prism::cancel(forced, {.force = true});
  bool ok = get_throws_cancelled(forced) &&
            std::chrono::steady_clock::now() - start < std::chrono::seconds{30};
  say(ok ? "cancel_force=ok" : "cancel_force=failed");
  // 500 calls that each wait 200 ms, served by one actor at once.
  auto g = prism::actor(gateway::create).remote();
  std::vector<prism::object_ref<int>> refs;
  for (int i = 0; i < 500; ++i)
    refs.push_back(g.task(&gateway::wait_ms).remote(200));
  int sum = 0;
  for (auto& r : refs)
    sum += prism::get(r, std::chrono::seconds{60});
  say(sum == 500 * 200 ? "async=ok" : "async=failed");
  prism::kill(g);
  // A health check in a group of its own answers while 20 calls of 1 s
  // fill the default group.
  auto svc = prism::actor(gateway::create)
                 .concurrency_groups({{"health", 1}})
                 .remote();
  prism::get(svc.task(&gateway::health).remote(), std::chrono::seconds{60});
  std::vector<prism::object_ref<int>> slow;
  for (int i = 0; i < 20; ++i)
    slow.push_back(svc.task(&gateway::busy_ms).remote(1'000));
  bool healthy =
      prism::get(svc.task(&gateway::health).remote(), std::chrono::seconds{60});
  std::vector<prism::object_ref<int>> first{slow.front()};
  bool first_running =
      prism::wait(first, 1, std::chrono::milliseconds{0}).ready.empty();
  say(healthy && first_running ? "health=ok" : "health=failed");
  prism::kill(svc);
}

} // namespace service_driver

PRISM_REMOTE(service_driver::service::create, &service_driver::service::visit);
PRISM_REMOTE(service_driver::spin, service_driver::stuck,
             service_driver::gateway::create, &service_driver::gateway::wait_ms,
             &service_driver::gateway::busy_ms,
             &service_driver::gateway::health);
PRISM_CONCURRENCY_GROUP("health", &service_driver::gateway::health);

int main(int argc, char** argv) {
  // A worker process of this program serves here and never returns.
  prism::init();
  int status = 0;
  if (argc > 1 && std::string{argv[1]} == "controls") {
    try {
      service_driver::check_controls();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "driver: failed: %s\n", e.what());
      status = 1;
    }
    prism::shutdown();
    return status;
  }
  try {
    std::printf("ready\n");
    std::fflush(stdout);
    std::string go;
    std::getline(std::cin, go);
    auto svc = prism::actor(service_driver::service::create)
                   .name("svc", "services")
                   .lifetime(prism::lifetime::detached)
                   .get_if_exists()
                   .remote();
    auto visit = prism::get(svc.task(&service_driver::service::visit).remote(),
                            std::chrono::seconds{120});
    std::printf("actor=%s visit=%d\n", svc.id().hex().c_str(), visit);
    std::fflush(stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "driver: failed: %s\n", e.what());
    status = 1;
  }
  prism::shutdown();
  return status;
}
