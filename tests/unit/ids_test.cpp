// Identifiers: random ids, nil ids and their hex form.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>
#include <unordered_set>

#include <sys/wait.h>
#include <unistd.h>

#include "prism/ids.hpp"

namespace ids_test {

namespace {

bool is_lowercase_hex(const std::string& s) {
  return s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_SUITE(ids)

BOOST_AUTO_TEST_CASE(default_unique_id_is_nil) {
  BOOST_TEST(prism::unique_id{}.nil());
}

BOOST_AUTO_TEST_CASE(random_unique_id_is_not_nil) {
  for (int i = 0; i < 1000; ++i)
    BOOST_TEST_REQUIRE(!prism::unique_id::random().nil());
}

BOOST_AUTO_TEST_CASE(random_unique_ids_are_distinct) {
  std::set<prism::unique_id> seen;
  for (int i = 0; i < 10'000; ++i)
    seen.insert(prism::unique_id::random());
  BOOST_TEST(seen.size() == 10'000u);
}

BOOST_AUTO_TEST_CASE(hex_of_a_unique_id_is_32_lowercase_hex_digits) {
  auto hex = prism::unique_id::random().hex();
  BOOST_TEST(hex.size() == 32u);
  BOOST_TEST(is_lowercase_hex(hex), hex);
}

BOOST_AUTO_TEST_CASE(
    hex_writes_the_high_half_first_most_significant_digit_first) {
  prism::unique_id id{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  BOOST_TEST(id.hex() == "0123456789abcdeffedcba9876543210");
  prism::task_id t{prism::worker_id{{0, 1}}, 0xa};
  BOOST_TEST(t.hex() == "00000000000000000000000000000001000000000000000a");
}

BOOST_AUTO_TEST_CASE(hex_of_the_nil_id_is_all_zeros) {
  BOOST_TEST(prism::unique_id{}.hex() == std::string(32, '0'));
}

BOOST_AUTO_TEST_CASE(distinct_ids_have_distinct_hex) {
  prism::unique_id a{1, 2};
  prism::unique_id b{2, 1};
  BOOST_TEST(a.hex() != b.hex());
}

BOOST_AUTO_TEST_CASE(default_object_id_is_nil) {
  BOOST_TEST(prism::object_id{}.nil());
}

BOOST_AUTO_TEST_CASE(object_id_with_index_zero_is_a_put) {
  prism::object_id put_id{prism::task_id{{prism::unique_id{1, 2}}, 3}, 0};
  prism::object_id return_id{prism::task_id{{prism::unique_id{1, 2}}, 3}, 1};
  BOOST_TEST(put_id.is_put());
  BOOST_TEST(!return_id.is_put());
  BOOST_TEST(!put_id.nil());
}

BOOST_AUTO_TEST_CASE(object_ids_of_one_task_differ_by_index) {
  prism::task_id task{{prism::unique_id{1, 2}}, 3};
  prism::object_id first{task, 1};
  prism::object_id second{task, 2};
  BOOST_TEST(first.hex() != second.hex());
}

// A submitter's results hash to consecutive values: a table holds them one
// to a bucket, in the order they were made, rather than scattered (where
// 200,000 random hashes put up to 7 in a bucket, and each lookup misses the
// cache). The embedded actor-call figures depend on it.
BOOST_AUTO_TEST_CASE(a_submitters_results_take_a_bucket_each_in_order) {
  prism::worker_id submitter{prism::unique_id::random()};
  std::unordered_set<prism::object_id> results;
  for (std::uint64_t seq = 1; seq <= 200'000; ++seq)
    results.insert(prism::object_id{prism::task_id{submitter, seq}, 1});
  std::size_t fullest = 0;
  for (std::size_t b = 0; b < results.bucket_count(); ++b)
    fullest = std::max(fullest, results.bucket_size(b));
  BOOST_TEST(fullest == 1u);
  prism::object_id first{prism::task_id{submitter, 1}, 1};
  prism::object_id next{prism::task_id{submitter, 2}, 1};
  BOOST_TEST(results.bucket(next) ==
             (results.bucket(first) + 1) % results.bucket_count());
}

// Two submitters' runs of tasks start far apart: their results share few
// buckets.
BOOST_AUTO_TEST_CASE(two_submitters_results_hardly_share_buckets) {
  std::unordered_set<prism::object_id> results;
  for (int s = 0; s < 2; ++s) {
    prism::worker_id submitter{prism::unique_id::random()};
    for (std::uint64_t seq = 1; seq <= 50'000; ++seq)
      results.insert(prism::object_id{prism::task_id{submitter, seq}, 1});
  }
  std::size_t fullest = 0;
  for (std::size_t b = 0; b < results.bucket_count(); ++b)
    fullest = std::max(fullest, results.bucket_size(b));
  BOOST_TEST(fullest <= 2u);
}

// An owner's actors take the ids of a run, which hash to consecutive values:
// the control store's table of actors holds a burst of creations one to a
// bucket, in order. `actor_creation` depends on it.
BOOST_AUTO_TEST_CASE(a_run_of_actor_ids_takes_a_bucket_each_in_order) {
  auto start = prism::unique_id::random();
  std::unordered_set<prism::actor_id> actors;
  for (std::uint64_t n = 0; n < 200'000; ++n)
    actors.insert(prism::actor_id::in_run(start, n));
  std::size_t fullest = 0;
  for (std::size_t b = 0; b < actors.bucket_count(); ++b)
    fullest = std::max(fullest, actors.bucket_size(b));
  BOOST_TEST(fullest == 1u);
  auto first = prism::actor_id::in_run(start, 0);
  auto next = prism::actor_id::in_run(start, 1);
  BOOST_TEST(actors.bucket(next) ==
             (actors.bucket(first) + 1) % actors.bucket_count());
}

// A run's ids look as random as any: operators name an actor by a short
// prefix of its hex (`prism get`, the status page), and the first 12 digits
// of 100,000 ids of one run tell every one apart.
BOOST_AUTO_TEST_CASE(a_run_of_actor_ids_differs_in_a_short_prefix) {
  auto start = prism::unique_id::random();
  std::unordered_set<std::string> prefixes;
  for (std::uint64_t n = 0; n < 100'000; ++n)
    prefixes.insert(prism::actor_id::in_run(start, n).hex().substr(0, 12));
  BOOST_TEST(prefixes.size() == 100'000u);
}

// Random actor ids (made by a supervisor, or stored by an older version)
// still spread over the buckets.
BOOST_AUTO_TEST_CASE(random_actor_ids_spread_over_the_buckets) {
  std::unordered_set<prism::actor_id> actors;
  for (int n = 0; n < 100'000; ++n)
    actors.insert(prism::actor_id{prism::unique_id::random()});
  std::size_t fullest = 0;
  for (std::size_t b = 0; b < actors.bucket_count(); ++b)
    fullest = std::max(fullest, actors.bucket_size(b));
  // A uniform spread of 100,000 over about as many buckets puts at most 8 or
  // so in one.
  BOOST_TEST(fullest <= 12u);
}

// A worker forked from its program's fork server is a copy of it, random
// engines and all: it must not draw the ids its parent draws next.
BOOST_AUTO_TEST_CASE(a_forked_process_draws_ids_of_its_own) {
  // This thread's engine is seeded before the fork.
  (void)prism::unique_id::random();
  int fds[2];
  BOOST_REQUIRE(::pipe(fds) == 0);
  pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    auto id = prism::unique_id::random();
    auto n = ::write(fds[1], &id, sizeof(id));
    ::_exit(n == sizeof(id) ? 0 : 1);
  }
  auto mine = prism::unique_id::random();
  prism::unique_id theirs;
  BOOST_TEST(::read(fds[0], &theirs, sizeof(theirs)) ==
             static_cast<ssize_t>(sizeof(theirs)));
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(fds[0]);
  ::close(fds[1]);
  BOOST_TEST(mine.hex() != theirs.hex());
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace ids_test
