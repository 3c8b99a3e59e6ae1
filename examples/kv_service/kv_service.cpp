// A long-lived service on Prism: a detached, named actor that keeps keys
// and values, with a health check in a group of its own, asynchronous
// methods that wait without a thread, and cancellation of a long scan.
// One program both starts the service and uses it, from the command line:
//
//   kv_service serve               starts the service (or finds it running)
//   kv_service put KEY VALUE       sets a key
//   kv_service get KEY             prints a key's value
//   kv_service wait KEY MS         waits up to MS ms for a key to be set
//   kv_service health              prints "ok" if the service answers
//   kv_service scan PREFIX MS      starts a slow scan of the keys under
//                                  PREFIX, cancels it after MS ms
//
// Each run attaches to the cluster at PRISM_ADDRESS as a job of its own;
// the service outlives them all. See examples/kv_service/README.md.

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <prism/prism.hpp>

namespace kv_service {

using namespace std::chrono_literals;

/// Where the service's data lives: the cluster's key-value table, which
/// the control store keeps durably, so a restarted instance finds it.
std::string stored(const std::string& key) {
  return "data/" + key;
}

class store {
public:
  static store* create() {
    return new store;
  }

  bool put(std::string key, std::string value) {
    prism::kv::put(stored(key), value);
    return true;
  }

  std::string get(std::string key) {
    return prism::kv::get(stored(key)).value_or("");
  }

  /// In a group of its own: answers while slow calls fill the others.
  std::string health() const {
    return "ok";
  }

  /// Waits until `key` is set, `timeout_ms` at most, without holding a
  /// thread: the actor serves other calls meanwhile.
  prism::future<std::string> wait_for(std::string key, int timeout_ms) {
    auto until = std::chrono::steady_clock::now() +
                 std::chrono::milliseconds{timeout_ms};
    for (;;) {
      if (auto value = prism::kv::get(stored(key)))
        co_return *value;
      if (std::chrono::steady_clock::now() >= until)
        co_return std::string{};
      co_await prism::sleep_for(20ms);
    }
  }

  /// Counts the keys under `prefix`, slowly (100 ms a key): a long job a
  /// caller may cancel, which ends it at its next wait.
  prism::future<int> scan(std::string prefix) {
    int seen = 0;
    for (const auto& key : prism::kv::keys(stored(prefix))) {
      static_cast<void>(key);
      co_await prism::sleep_for(100ms);
      ++seen;
    }
    co_return seen;
  }
};

prism::actor_handle<store> service() {
  return prism::actor(store::create)
      .name("kv", "kv_service")
      .lifetime(prism::lifetime::detached)
      .get_if_exists()
      .max_restarts(-1)
      .max_task_retries(-1)
      .resources({{"CPU", 1}})
      .concurrency_groups({{"health", 1}})
      .remote();
}

int run(const std::vector<std::string>& args) {
  auto usage = [] {
    std::fprintf(stderr, "usage: kv_service serve | put KEY VALUE | get KEY "
                         "| wait KEY MS | health | scan PREFIX MS\n");
    return 2;
  };
  if (args.empty())
    return usage();
  const auto& what = args[0];
  auto kv = service();
  if (what == "serve" && args.size() == 1) {
    std::printf("kv_service: serving as actor %s\n", kv.id().hex().c_str());
  } else if (what == "put" && args.size() == 3) {
    prism::get(kv.task(&store::put).remote(args[1], args[2]), 60s);
    std::printf("ok\n");
  } else if (what == "get" && args.size() == 2) {
    std::printf("%s\n",
                prism::get(kv.task(&store::get).remote(args[1]), 60s).c_str());
  } else if (what == "wait" && args.size() == 3) {
    auto ref = kv.task(&store::wait_for).remote(args[1], std::stoi(args[2]));
    std::printf("%s\n", prism::get(ref, 120s).c_str());
  } else if (what == "health" && args.size() == 1) {
    std::printf("%s\n",
                prism::get(kv.task(&store::health).remote(), 10s).c_str());
  } else if (what == "scan" && args.size() == 3) {
    auto ref = kv.task(&store::scan).remote(args[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds{std::stoi(args[2])});
    prism::cancel(ref);
    try {
      std::printf("scanned %d keys\n", prism::get(ref, 60s));
    } catch (const prism::task_cancelled_error&) {
      std::printf("scan cancelled\n");
    }
  } else {
    return usage();
  }
  return 0;
}

} // namespace kv_service

PRISM_REMOTE(kv_service::store::create, &kv_service::store::put,
             &kv_service::store::get, &kv_service::store::health,
             &kv_service::store::wait_for, &kv_service::store::scan);
PRISM_CONCURRENCY_GROUP("health", &kv_service::store::health);

int main(int argc, char** argv) {
  // A worker process of this program serves the cluster here instead.
  prism::init();
  int status = 0;
  try {
    status = kv_service::run({argv + 1, argv + argc});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kv_service: %s\n", e.what());
    status = 1;
  }
  prism::shutdown();
  return status;
}
