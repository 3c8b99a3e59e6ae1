// Named services started exactly once: drivers of their own, each a process
// attached to the cluster, race to get or create one detached actor by its
// name; and a driver uses the other controls of a service, cancellation and
// asynchronous methods (programs/service_driver.cpp).

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include <prism/prism.hpp>

#include "output_driver.hpp"
#include "prism_command.hpp"

namespace services_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(named_services)

// Fifty drivers attach, wait until all are attached, and then at once each
// gets or creates the service: every one gets the same actor, whose factory
// ran once (its visits count 1 to 50, one per driver).
BOOST_AUTO_TEST_CASE(fifty_drivers_racing_get_one_service) {
  constexpr int drivers = 50;
  process_cluster cluster{attached_cluster(0)};
  std::vector<driver_process> ds;
  for (int i = 0; i < drivers; ++i)
    ds.push_back(start_program(cluster, PRISM_SERVICE_DRIVER_PATH, {},
                               {"PRISM_ADDRESS=" + cluster.address()},
                               "service-" + std::to_string(i)));
  for (auto& d : ds)
    BOOST_REQUIRE_MESSAGE(
        eventually(180s, [&] { return contains(d.out_text(), "ready\n"); }),
        "a driver did not attach: " << d.err_text());
  for (auto& d : ds)
    d.say("go");
  std::regex said{R"(actor=([0-9a-f]+) visit=(\d+))"};
  std::map<std::string, int> actors;
  std::vector<int> visits;
  for (auto& d : ds) {
    BOOST_REQUIRE_MESSAGE(d.finish(cluster) == 0, d.err_text());
    std::smatch m;
    auto out = d.out_text();
    BOOST_REQUIRE_MESSAGE(std::regex_search(out, m, said), out);
    ++actors[m[1]];
    visits.push_back(std::stoi(m[2]));
  }
  BOOST_TEST(actors.size() == 1u);
  std::sort(visits.begin(), visits.end());
  for (int i = 0; i < drivers; ++i)
    BOOST_TEST(visits[i] == i + 1);
  prism::state::list_options o;
  o.filters = {"name=svc", "namespace=services"};
  auto listed = prism::state::list(prism::state::kind::actors, o);
  BOOST_TEST(listed.matched == 1u);
  if (!listed.entries.empty())
    BOOST_TEST(listed.entries[0]["actor_id"] == actors.begin()->first);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

// The controls a long-lived service needs, on a cluster of processes: a
// driver (a process of its own) cancels a running task, cancels one with
// force, has one asynchronous actor serve 500 calls that wait at once, and
// gets a health check answered while slow calls fill the default group.
BOOST_AUTO_TEST_CASE(a_driver_uses_the_controls_of_a_service) {
  process_cluster cluster{attached_cluster(1)};
  auto d = start_program(cluster, PRISM_SERVICE_DRIVER_PATH, {"controls"},
                         {"PRISM_ADDRESS=" + cluster.address()}, "controls");
  BOOST_REQUIRE_MESSAGE(d.finish(cluster) == 0, d.err_text());
  auto out = d.out_text();
  BOOST_TEST(contains(out, "cancel_running=ok\n"), out);
  BOOST_TEST(contains(out, "cancel_force=ok\n"), out);
  BOOST_TEST(contains(out, "async=ok\n"), out);
  BOOST_TEST(contains(out, "health=ok\n"), out);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace services_test
