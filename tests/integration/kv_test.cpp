// The user key-value table: put, get, exists, del and keys, namespaces, and
// use from tasks and other jobs.

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "cluster_fixture.hpp"

namespace kv_test {

using prism_test::cluster_fixture;
using prism_test::result_timeout;

/// Writes `value` under `key` in `ns` from inside a task and reads it back.
std::string write_from_task(std::string key, std::string value,
                            std::string ns) {
  prism::kv::put(key, value, true, ns);
  return prism::kv::get(key, ns).value_or("missing");
}

/// Writes `value` under `key` in the namespace of the task's job.
void write_in_own_namespace(std::string key, std::string value) {
  prism::kv::put(key, value);
}

PRISM_REMOTE(kv_test::write_from_task, kv_test::write_in_own_namespace);

BOOST_FIXTURE_TEST_SUITE(kv, cluster_fixture)

BOOST_AUTO_TEST_CASE(put_get_del_round_trip) {
  BOOST_TEST(!prism::kv::get("color").has_value());
  BOOST_TEST(!prism::kv::put("color", "blue"));
  BOOST_TEST((prism::kv::get("color") == "blue"));
  BOOST_TEST(prism::kv::exists("color"));
  BOOST_TEST(prism::kv::put("color", "red"));
  BOOST_TEST((prism::kv::get("color") == "red"));
  BOOST_TEST(prism::kv::del("color"));
  BOOST_TEST(!prism::kv::del("color"));
  BOOST_TEST(!prism::kv::exists("color"));
}

BOOST_AUTO_TEST_CASE(put_without_overwrite_keeps_the_first_value) {
  BOOST_TEST(!prism::kv::put("leader", "a", false));
  BOOST_TEST(prism::kv::put("leader", "b", false));
  BOOST_TEST((prism::kv::get("leader") == "a"));
}

BOOST_AUTO_TEST_CASE(values_are_bytes) {
  std::string bytes{"\0\xff\n", 3};
  prism::kv::put("blob", bytes);
  BOOST_TEST((prism::kv::get("blob") == bytes));
  std::string big(1 << 20, 'x');
  prism::kv::put("big", big);
  BOOST_TEST((prism::kv::get("big")->size() == big.size()));
}

BOOST_AUTO_TEST_CASE(keys_lists_a_prefix_in_byte_order) {
  for (auto k : {"job/2", "job/10", "job/1", "jobs", "other"})
    prism::kv::put(k, "x");
  BOOST_TEST((prism::kv::keys("job/") ==
              std::vector<std::string>{"job/1", "job/10", "job/2"}));
  BOOST_TEST(prism::kv::keys("").size() == 5u);
  BOOST_TEST(prism::kv::keys("nothing").empty());
}

BOOST_AUTO_TEST_CASE(namespaces_isolate_keys) {
  prism::kv::put("k", "mine");
  prism::kv::put("k", "theirs", true, "elsewhere");
  BOOST_TEST((prism::kv::get("k") == "mine"));
  BOOST_TEST((prism::kv::get("k", "elsewhere") == "theirs"));
  BOOST_TEST(prism::kv::keys("", "elsewhere").size() == 1u);
  BOOST_TEST(prism::kv::del("k", "elsewhere"));
  BOOST_TEST((prism::kv::get("k") == "mine"));
}

BOOST_AUTO_TEST_CASE(tasks_read_and_write_the_table) {
  auto ref =
      prism::task(kv_test::write_from_task).remote("from-task", "42", "shared");
  BOOST_TEST(prism::get(ref, result_timeout) == "42");
  BOOST_TEST((prism::kv::get("from-task", "shared") == "42"));
}

BOOST_AUTO_TEST_CASE(a_task_shares_its_jobs_namespace) {
  prism::get(prism::task(kv_test::write_in_own_namespace).remote("mine", "1"),
             result_timeout);
  BOOST_TEST((prism::kv::get("mine") == "1"));
  auto other = prism::client::connect("other_job");
  other.get(other.task(kv_test::write_in_own_namespace).remote("mine", "2"),
            result_timeout);
  BOOST_TEST((prism::kv::get("mine") == "1"));
  BOOST_TEST((prism::kv::get("mine", "other_job") == "2"));
}

BOOST_AUTO_TEST_CASE(an_empty_key_is_rejected) {
  BOOST_CHECK_THROW(prism::kv::put("", "v"), prism::invalid_argument_error);
  BOOST_CHECK_THROW(prism::kv::get(""), prism::invalid_argument_error);
  BOOST_CHECK_THROW(prism::kv::del(""), prism::invalid_argument_error);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(kv_needs_a_running_prism) {
  BOOST_CHECK_THROW(prism::kv::put("k", "v"), prism::not_initialized_error);
}

} // namespace kv_test
