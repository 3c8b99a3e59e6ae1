// prism::get_runtime_context() on the driver and inside tasks.

#include <boost/test/unit_test.hpp>

#include "cluster_fixture.hpp"

namespace runtime_context_test {

using prism_test::result_timeout;

/// The runtime context a task saw, sent back to the driver.
struct seen_context {
  prism::job_id job;
  prism::worker_id worker;
  prism::task_id task;
  std::int32_t attempt = -1;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, seen_context& x) {
  return f(x.job, static_cast<prism::unique_id&>(x.worker), x.task, x.attempt);
}

seen_context report_context() {
  auto ctx = prism::get_runtime_context();
  return seen_context{ctx.job, ctx.worker, ctx.task, ctx.attempt};
}

PRISM_REMOTE(runtime_context_test::report_context);

using namespace runtime_context_test;

namespace {

seen_context run_report_context() {
  return prism::get(prism::task(report_context).remote(), result_timeout);
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(runtime_context, prism_test::cluster_fixture)

BOOST_AUTO_TEST_CASE(driver_context_has_a_nil_task) {
  auto ctx = prism::get_runtime_context();
  BOOST_TEST(ctx.task.submitter.nil());
  BOOST_TEST(ctx.task.seq == 0u);
}

BOOST_AUTO_TEST_CASE(driver_context_names_the_driver_as_a_worker) {
  BOOST_TEST(!prism::get_runtime_context().worker.nil());
}

BOOST_AUTO_TEST_CASE(task_context_has_a_task_id) {
  auto seen = run_report_context();
  BOOST_TEST((seen.task != prism::task_id{}));
}

BOOST_AUTO_TEST_CASE(task_context_on_its_first_run_has_attempt_zero) {
  BOOST_TEST(run_report_context().attempt == 0);
}

BOOST_AUTO_TEST_CASE(task_runs_in_the_job_of_its_driver) {
  auto driver = prism::get_runtime_context();
  BOOST_TEST(run_report_context().job.value == driver.job.value);
}

BOOST_AUTO_TEST_CASE(task_runs_on_a_worker_other_than_the_driver) {
  auto driver = prism::get_runtime_context();
  auto seen = run_report_context();
  BOOST_TEST(!seen.worker.nil());
  BOOST_TEST(seen.worker.hex() != driver.worker.hex());
}

BOOST_AUTO_TEST_CASE(task_id_names_the_driver_as_its_submitter) {
  auto driver = prism::get_runtime_context();
  BOOST_TEST(run_report_context().task.submitter.hex() == driver.worker.hex());
}

BOOST_AUTO_TEST_CASE(each_task_gets_its_own_task_id) {
  auto first = run_report_context();
  auto second = run_report_context();
  BOOST_TEST(first.task.hex() != second.task.hex());
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace runtime_context_test
