// Ray's worker-pool crash (issue 52090), on processes: job one makes a
// detached service actor whose calls run subtasks, and ends; job two calls
// the service while its own tasks run on the same nodes; the node process
// that hosts the service is killed with SIGKILL and a new node joins. The
// service answers every call, its subtasks run in job one's workers only,
// job two's tasks in job two's, and no process crashes.

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include <boost/test/unit_test.hpp>

#include <prism/prism.hpp>

#include "prism_command.hpp"

namespace worker_pool_regression_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;

namespace worker_pool_regression {

constexpr auto result_timeout = std::chrono::seconds{60};

/// The sum of the squares of a range, and which job's worker computed it.
struct partial_sum {
  std::int64_t sum = 0;
  std::uint32_t job = 0;
  prism::worker_id worker;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partial_sum& x) {
  return f(x.sum, x.job, static_cast<prism::unique_id&>(x.worker));
}

partial_sum sum_squares_between(int from, int to) {
  partial_sum result;
  for (std::int64_t i = from; i < to; ++i)
    result.sum += i * i;
  auto ctx = prism::get_runtime_context();
  result.job = ctx.job.value;
  result.worker = ctx.worker;
  return result;
}

/// A service that answers each call with four subtasks.
class squares_service {
public:
  static squares_service* create() {
    return new squares_service;
  }

  std::vector<partial_sum> sum_of_squares(int n) {
    std::vector<prism::object_ref<partial_sum>> parts;
    for (int quarter = 0; quarter < 4; ++quarter)
      parts.push_back(
          prism::task(sum_squares_between)
              .remote(1 + quarter * n / 4, 1 + (quarter + 1) * n / 4));
    return prism::get(parts, result_timeout);
  }

  int pid() const {
    return static_cast<int>(::getpid());
  }
};

/// A plain actor of job one: its death shows that job one's end was handled.
class job_marker {
public:
  static job_marker* create() {
    return new job_marker;
  }

  int ping() {
    return 1;
  }
};

} // namespace worker_pool_regression

PRISM_REMOTE(worker_pool_regression::sum_squares_between);
PRISM_REMOTE(worker_pool_regression::squares_service::create,
             &worker_pool_regression::squares_service::sum_of_squares,
             &worker_pool_regression::squares_service::pid);
PRISM_REMOTE(worker_pool_regression::job_marker::create,
             &worker_pool_regression::job_marker::ping);

using namespace worker_pool_regression;

namespace {

std::int64_t squares_up_to(std::int64_t n) {
  return n * (n + 1) * (2 * n + 1) / 6;
}

int parent_of(int pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
  std::string stat{std::istreambuf_iterator<char>{in}, {}};
  auto close = stat.rfind(')');
  char state = 0;
  int ppid = 0;
  if (close == std::string::npos ||
      std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2)
    return 0;
  return ppid;
}

/// Which of `nodes` runs the worker process `pid`: its parent, or its
/// grandparent for a worker forked from its program's fork server.
std::optional<std::size_t> node_of(const process_cluster& cluster,
                                   const std::vector<std::size_t>& nodes,
                                   int pid) {
  for (int step = 0; step < 3 && pid > 1; ++step) {
    pid = parent_of(pid);
    for (auto i : nodes)
      if (cluster.node_pid(i) == pid)
        return i;
  }
  return std::nullopt;
}

bool alive(int pid) {
  return pid > 0 && ::kill(pid, 0) == 0;
}

} // namespace

BOOST_AUTO_TEST_SUITE(worker_pool_regression_suite)

BOOST_AUTO_TEST_CASE(a_detached_service_serves_another_job_across_a_node_kill) {
  process_cluster cluster{attached_cluster(0)};
  const std::vector<std::string> svc_flags{"--resources", R"({"svc": 1})"};
  std::vector<std::size_t> svc_nodes{cluster.add_node(svc_flags),
                                     cluster.add_node(svc_flags)};
  const prism::resource_map on_svc_node{{"CPU", 1}, {"svc", 0.01}};

  // Job one makes the service and ends.
  auto job_one = prism::client::connect("svc");
  auto job_one_id = job_one.job().value;
  auto created = job_one.actor(squares_service::create)
                     .name("squares")
                     .lifetime(prism::lifetime::detached)
                     .max_restarts(-1)
                     .max_task_retries(-1)
                     .resources({{"svc", 0.01}})
                     .remote();
  BOOST_REQUIRE(
      job_one
          .get(created.task(&squares_service::sum_of_squares).remote(8),
               result_timeout)
          .size() == 4u);
  auto marker = job_one.actor(job_marker::create).name("marker").remote();
  BOOST_REQUIRE(job_one.get(marker.task(&job_marker::ping).remote(),
                            result_timeout) == 1);
  auto job_two = prism::client::connect("svc");
  auto job_two_id = job_two.job().value;
  auto marker_seen = job_two.get_actor<job_marker>("marker");
  BOOST_REQUIRE(marker_seen.has_value());
  job_one.shutdown();
  BOOST_REQUIRE_MESSAGE(
      eventually(30s,
                 [&] {
                   try {
                     job_two.get(marker_seen->task(&job_marker::ping).remote(),
                                 result_timeout);
                   } catch (const prism::actor_died_error&) {
                     return true;
                   }
                   return false;
                 }),
      "job one's end was not handled");
  auto service = job_two.get_actor<squares_service>("squares");
  BOOST_REQUIRE(service.has_value());

  // Job two calls the service, and runs tasks of its own on the same nodes.
  std::map<std::string, std::set<std::uint32_t>> jobs_by_worker;
  int calls = 0;
  int wrong = 0;
  auto use_service = [&](int n_calls) {
    for (int i = 0; i < n_calls; ++i, ++calls) {
      int n = 100 + calls;
      auto parts =
          job_two.get(service->task(&squares_service::sum_of_squares).remote(n),
                      result_timeout);
      std::int64_t sum = 0;
      for (auto& part : parts) {
        sum += part.sum;
        jobs_by_worker[part.worker.hex()].insert(part.job);
      }
      wrong += sum == squares_up_to(n) ? 0 : 1;
      auto own = job_two.get(
          job_two.task(sum_squares_between).resources(on_svc_node).remote(1, 4),
          result_timeout);
      jobs_by_worker[own.worker.hex()].insert(own.job);
      BOOST_TEST(own.job == job_two_id);
    }
  };
  use_service(15);

  // The node process hosting the service dies; a new node joins.
  auto host = node_of(cluster, svc_nodes,
                      job_two.get(service->task(&squares_service::pid).remote(),
                                  result_timeout));
  BOOST_REQUIRE(host.has_value());
  cluster.kill_node(*host);
  auto survivor = svc_nodes[0] == *host ? svc_nodes[1] : svc_nodes[0];
  auto replacement = cluster.add_node(svc_flags);
  use_service(15);

  BOOST_TEST(calls == 30);
  BOOST_TEST(wrong == 0);
  // The service's subtasks ran in job one, in no worker that ran job two's.
  std::set<std::uint32_t> jobs;
  for (auto& [worker, of] : jobs_by_worker) {
    BOOST_TEST(of.size() == 1u,
               "worker " << worker << " ran tasks of " << of.size() << " jobs");
    jobs.insert(of.begin(), of.end());
  }
  BOOST_TEST((jobs == std::set<std::uint32_t>{job_one_id, job_two_id}));
  // No process crashed.
  BOOST_TEST(alive(cluster.node_pid(0)));
  BOOST_TEST(alive(cluster.node_pid(survivor)));
  BOOST_TEST(alive(cluster.node_pid(replacement)));
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace worker_pool_regression_test
