// Several jobs in one process, each attached with prism::client::connect:
// job ids, the job a task runs in, workers kept apart per job, and the fate
// of a job's actors when the job ends.

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster_fixture.hpp"

namespace jobs_test {

using prism_test::actor_died_message;
using prism_test::result_timeout;
using prism_test::wait_until;

/// The job and worker a task ran in.
struct placement {
  std::uint32_t job = 0;
  prism::worker_id worker;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, placement& x) {
  return f(x.job, static_cast<prism::unique_id&>(x.worker));
}

placement where_am_i() {
  auto ctx = prism::get_runtime_context();
  return placement{ctx.job.value, ctx.worker};
}

/// An actor that keeps a running total.
class counter {
public:
  static counter* create(int start) {
    return new counter(start);
  }

  int add(int x) {
    total_ += x;
    return total_;
  }

  int read() const {
    return total_;
  }

private:
  explicit counter(int start) : total_(start) {}

  int total_;
};

/// An actor that submits a task and reports the job the task ran in.
class dispatcher {
public:
  static dispatcher* create() {
    return new dispatcher;
  }

  std::uint32_t subtask_job() {
    return prism::get(prism::task(where_am_i).remote(), result_timeout).job;
  }
};

PRISM_REMOTE(jobs_test::where_am_i);
PRISM_REMOTE(jobs_test::counter::create, &jobs_test::counter::add,
             &jobs_test::counter::read);
PRISM_REMOTE(jobs_test::dispatcher::create,
             &jobs_test::dispatcher::subtask_job);

using namespace jobs_test;

namespace {

using counter_handle = prism::actor_handle<counter>;

/// Returns true once calls through `job` fail with `actor_died_error`, or
/// false if the actor still answers at the deadline.
bool wait_until_dead(const prism::client& job, const counter_handle& h) {
  return wait_until([&] {
    return actor_died_message(job, h.task(&counter::read).remote()).has_value();
  });
}

/// Submits `n` tasks through `submit` and returns their refs.
template <class Submit>
std::vector<prism::object_ref<placement>> submit_many(int n, Submit submit) {
  std::vector<prism::object_ref<placement>> refs;
  for (int i = 0; i < n; ++i)
    refs.push_back(submit());
  return refs;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(jobs, prism_test::cpus_fixture<4>)

// -- job ids ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(each_client_is_a_job_of_its_own) {
  auto a = prism::client::connect();
  auto b = prism::client::connect();
  auto driver = prism::get_runtime_context().job.value;
  BOOST_TEST(a.job().value != b.job().value);
  BOOST_TEST(a.job().value != driver);
  BOOST_TEST(b.job().value != driver);
}

BOOST_AUTO_TEST_CASE(task_of_a_client_runs_in_the_clients_job) {
  auto b = prism::client::connect();
  auto seen = b.get(b.task(where_am_i).remote(), result_timeout);
  BOOST_TEST(seen.job == b.job().value);
}

BOOST_AUTO_TEST_CASE(no_worker_runs_tasks_of_two_jobs) {
  auto a = prism::client::connect();
  auto b = prism::client::connect();
  auto driver_job = prism::get_runtime_context().job.value;
  // Workers seen per job of the submitter, over two rounds, so that the
  // second round could reuse idle workers of the first.
  std::map<std::string, std::set<std::uint32_t>> jobs_by_worker;
  for (int round = 0; round < 2; ++round) {
    auto from_driver =
        submit_many(8, [] { return prism::task(where_am_i).remote(); });
    auto from_a = submit_many(8, [&] { return a.task(where_am_i).remote(); });
    auto from_b = submit_many(8, [&] { return b.task(where_am_i).remote(); });
    for (const auto& ref : from_driver)
      jobs_by_worker[prism::get(ref, result_timeout).worker.hex()].insert(
          driver_job);
    for (const auto& ref : from_a)
      jobs_by_worker[a.get(ref, result_timeout).worker.hex()].insert(
          a.job().value);
    for (const auto& ref : from_b)
      jobs_by_worker[b.get(ref, result_timeout).worker.hex()].insert(
          b.job().value);
  }
  for (const auto& [worker, jobs] : jobs_by_worker)
    BOOST_TEST(jobs.size() == 1u, "worker " << worker << " ran tasks of "
                                            << jobs.size() << " jobs");
}

// -- namespaces ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(jobs_in_one_namespace_share_actor_names) {
  auto a = prism::client::connect("shared");
  auto b = prism::client::connect("shared");
  auto h = a.actor(counter::create).name("tally").remote(0);
  BOOST_REQUIRE(a.get(h.task(&counter::add).remote(3), result_timeout) == 3);
  auto found = b.get_actor<counter>("tally");
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(b.get(found->task(&counter::read).remote(), result_timeout) == 3);
}

BOOST_AUTO_TEST_CASE(job_does_not_see_names_of_another_namespace) {
  auto a = prism::client::connect("ns_a");
  auto b = prism::client::connect("ns_b");
  auto h = a.actor(counter::create).name("tally").remote(0);
  BOOST_REQUIRE(a.get(h.task(&counter::add).remote(1), result_timeout) == 1);
  BOOST_TEST(!b.get_actor<counter>("tally").has_value());
  BOOST_TEST(b.get_actor<counter>("tally", "ns_a").has_value());
}

// -- the end of a job ---------------------------------------------------------

BOOST_AUTO_TEST_CASE(ending_a_job_kills_its_non_detached_actors) {
  auto a = prism::client::connect("shared");
  auto b = prism::client::connect("shared");
  auto h = a.actor(counter::create).name("plain").remote(0);
  BOOST_REQUIRE(a.get(h.task(&counter::add).remote(1), result_timeout) == 1);
  auto seen = b.get_actor<counter>("plain");
  BOOST_REQUIRE(seen.has_value());
  a.shutdown();
  BOOST_TEST(wait_until_dead(b, *seen),
             "an actor of an ended job still answers");
}

BOOST_AUTO_TEST_CASE(detached_actor_outlives_the_job_that_created_it) {
  auto a = prism::client::connect("shared");
  auto b = prism::client::connect("shared");
  auto plain = a.actor(counter::create).name("plain").remote(0);
  auto lasting = a.actor(counter::create)
                     .name("lasting")
                     .lifetime(prism::lifetime::detached)
                     .remote(0);
  BOOST_REQUIRE(a.get(plain.task(&counter::add).remote(1), result_timeout) ==
                1);
  BOOST_REQUIRE(a.get(lasting.task(&counter::add).remote(5), result_timeout) ==
                5);
  auto plain_seen = b.get_actor<counter>("plain");
  BOOST_REQUIRE(plain_seen.has_value());
  a.shutdown();
  // Once the job's plain actor is dead, the job's end has been handled.
  BOOST_REQUIRE_MESSAGE(wait_until_dead(b, *plain_seen),
                        "the ended job's plain actor still answers");
  auto found = b.get_actor<counter>("lasting");
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(b.get(found->task(&counter::read).remote(), result_timeout) == 5);
}

BOOST_AUTO_TEST_CASE(a_client_calls_an_actor_from_its_own_job) {
  auto a = prism::client::connect();
  auto h = a.actor(counter::create).remote(1);
  BOOST_TEST(a.get(a.task(h, &counter::add).remote(2), result_timeout) == 3);
  // The default job calls the same actor through the handle.
  BOOST_TEST(prism::get(h.task(&counter::read).remote(), result_timeout) == 3);
  a.shutdown();
  // A call through the ended job is refused, not sent from another job.
  BOOST_CHECK_THROW(a.task(h, &counter::read), prism::not_initialized_error);
}

BOOST_AUTO_TEST_CASE(ended_client_refuses_new_tasks) {
  auto a = prism::client::connect();
  a.shutdown();
  BOOST_CHECK_THROW(a.task(where_am_i).remote(), prism::not_initialized_error);
}

BOOST_AUTO_TEST_CASE(ending_a_client_twice_is_not_an_error) {
  auto a = prism::client::connect();
  a.shutdown();
  BOOST_CHECK_NO_THROW(a.shutdown());
}

// -- detached actors across jobs ----------------------------------------------

BOOST_AUTO_TEST_CASE(detached_actors_task_runs_in_the_job_that_created_it) {
  auto a = prism::client::connect("shared");
  auto b = prism::client::connect("shared");
  a.actor(dispatcher::create)
      .name("dispatch")
      .lifetime(prism::lifetime::detached)
      .remote();
  auto found = b.get_actor<dispatcher>("dispatch");
  BOOST_REQUIRE(found.has_value());
  auto job =
      b.get(found->task(&dispatcher::subtask_job).remote(), result_timeout);
  BOOST_TEST(job == a.job().value);
  BOOST_TEST(job != b.job().value);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace jobs_test
