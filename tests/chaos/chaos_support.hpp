#pragma once

// What the chaos tests share: the checks made once the workload is done.

#include <boost/test/unit_test.hpp>

#include <atomic>

#include "cluster_fixture.hpp"

namespace prism_chaos {

/// Waits, before a cluster shuts down, until the task bodies counted in
/// `in_flight` have ended: a body on a killed worker runs to its end inside
/// this process.
inline void expect_bodies_end(const std::atomic<int>& in_flight) {
  BOOST_CHECK_MESSAGE(
      prism_test::wait_until([&] { return in_flight.load() == 0; }),
      "task bodies on killed workers did not end");
}

/// Waits until every live node has all of `cpus` CPUs free again; fails the
/// test with the node's figures if one does not within the deadline.
inline void expect_cpus_return_to_full(prism::testing::local_cluster& cluster,
                                       double cpus) {
  for (auto& n : cluster.alive_nodes()) {
    BOOST_TEST_CONTEXT("node " << n.hex()) {
      double free = -1;
      bool full = prism_test::wait_until([&] {
        auto r = cluster.available_resources(n);
        free = r ? (*r)["CPU"] : -1;
        return !r || free == cpus;
      });
      BOOST_TEST(full, "CPUs free: " << free << " of " << cpus);
    }
  }
}

} // namespace prism_chaos
