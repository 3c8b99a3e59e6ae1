// A driver for the cluster suite's test of named services. It attaches to
// the cluster named by PRISM_ADDRESS, says "ready" on stdout, and waits for
// a line on its stdin: then it gets the detached actor "svc" of namespace
// "services", or creates it if there is none, calls it once, and prints
// "actor=<id> visit=<n>", n counting the actor's calls from every driver.
//
//   service_driver

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

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

} // namespace service_driver

PRISM_REMOTE(service_driver::service::create, &service_driver::service::visit);

int main() {
  // A worker process of this program serves here and never returns.
  prism::init();
  int status = 0;
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
