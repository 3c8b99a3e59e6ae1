#pragma once

// What the chaos tests share: the checks made once the workload is done.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstdint>

#include "cluster_fixture.hpp"
#include "prism/internal/actor_state.hpp"
#include "prism/internal/node_state.hpp"
#include "prism/internal/task_state.hpp"

namespace prism_chaos {

/// Checks, when it ends, that no actor, node or task state machine of this
/// process refused a change since it began (each refusal is a bug, logged
/// where it happened). The embedded cluster runs in the test's process, so
/// its counters are read here. A fixture derives from it, so that it begins
/// before the fixture's cluster and ends after the cluster shut down.
class transitions_stay_legal {
public:
  transitions_stay_legal()
      : actors_(prism::internal::illegal_actor_transitions()),
        nodes_(prism::internal::illegal_node_transitions()),
        tasks_(prism::internal::illegal_task_transitions()) {}

  ~transitions_stay_legal() {
    BOOST_TEST(prism::internal::illegal_actor_transitions() == actors_,
               "the control store refused impossible actor state changes");
    BOOST_TEST(prism::internal::illegal_node_transitions() == nodes_,
               "the control store refused impossible node state changes");
    BOOST_TEST(prism::internal::illegal_task_transitions() == tasks_,
               "owners refused impossible task state changes");
  }

  transitions_stay_legal(const transitions_stay_legal&) = delete;
  transitions_stay_legal& operator=(const transitions_stay_legal&) = delete;

private:
  std::uint64_t actors_;
  std::uint64_t nodes_;
  std::uint64_t tasks_;
};

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
