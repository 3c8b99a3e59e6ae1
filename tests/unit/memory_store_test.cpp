// The memory store once its owner is gone: what was pending fails, and so
// does everything added pending afterwards, so that no `get` waits forever.

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <vector>

#include "prism/internal/memory_store.hpp"

using prism::internal::memory_store;

namespace {

prism::object_id some_object(std::uint64_t seq) {
  return prism::object_id{
      prism::task_id{prism::worker_id{prism::unique_id::random()}, seq}, 1};
}

prism::detail::error_info owner_gone() {
  prism::detail::error_info err;
  err.code = prism::errc::owner_died;
  err.message = "the owner ended";
  return err;
}

} // namespace

BOOST_AUTO_TEST_SUITE(memory_store_close)

BOOST_AUTO_TEST_CASE(close_fails_what_is_pending_and_keeps_what_is_ready) {
  memory_store store;
  auto pending = some_object(1);
  auto ready = some_object(2);
  store.add_pending(pending);
  store.add_ready(ready, prism::detail::value{});
  store.close(owner_gone());
  auto p = store.lookup(pending);
  BOOST_TEST((p.st == memory_store::state::ready));
  BOOST_REQUIRE(p.err != nullptr);
  BOOST_TEST((p.err->code == prism::errc::owner_died));
  BOOST_TEST((store.lookup(ready).err == nullptr));
}

BOOST_AUTO_TEST_CASE(an_entry_added_pending_after_close_is_failed_at_once) {
  memory_store store;
  BOOST_TEST(!store.closed());
  store.close(owner_gone());
  BOOST_TEST(store.closed());
  auto late = some_object(3);
  store.add_pending(late);
  auto deadline = memory_store::clock::now() + std::chrono::seconds{5};
  auto r = store.wait_one(late, deadline);
  BOOST_TEST((r.st == memory_store::state::ready));
  BOOST_REQUIRE(r.err != nullptr);
  BOOST_TEST(r.err->message == "the owner ended");
  BOOST_TEST((memory_store::clock::now() < deadline));
}

BOOST_AUTO_TEST_SUITE_END()

// Entries whose value is kept in a node's object store: ready without a
// value here, pending again while rebuilt, and reported when freed so that
// the node's copy goes too.
BOOST_AUTO_TEST_SUITE(memory_store_remote)

BOOST_AUTO_TEST_CASE(a_remote_entry_is_ready_and_names_its_node) {
  memory_store store;
  auto id = some_object(1);
  auto node = prism::node_id{prism::unique_id::random()};
  store.add_pending(id);
  BOOST_TEST(store.complete_remote(id, node));
  auto found = store.lookup(id);
  BOOST_TEST((found.st == memory_store::state::ready));
  BOOST_TEST((found.location == node));
  BOOST_TEST(found.val.size() == 0u);
  BOOST_TEST(found.err == nullptr);
  // Ready entries count as ready for `wait`.
  auto ready = store.wait_many({id}, 1, std::chrono::steady_clock::now());
  BOOST_TEST(ready.at(0));
}

BOOST_AUTO_TEST_CASE(reopen_makes_a_lost_remote_entry_pending_again) {
  memory_store store;
  auto id = some_object(1);
  auto local = some_object(2);
  auto node = prism::node_id{prism::unique_id::random()};
  store.add_remote(id, node);
  store.add_ready(local, prism::detail::value{});
  // Only entries kept in a node's store can be reopened.
  BOOST_TEST(!store.reopen(local));
  BOOST_TEST(store.reopen(id));
  BOOST_TEST((store.lookup(id).st == memory_store::state::pending));
  BOOST_TEST(store.lookup(id).location.nil());
  auto other = prism::node_id{prism::unique_id::random()};
  BOOST_TEST(store.complete_remote(id, other));
  BOOST_TEST((store.lookup(id).location == other));
}

BOOST_AUTO_TEST_CASE(freeing_a_remote_entry_calls_the_hook_once) {
  memory_store store;
  std::vector<prism::object_id> freed;
  store.on_free([&](const prism::object_id& id, const prism::node_id&) {
    freed.push_back(id);
  });
  auto remote = some_object(1);
  auto local = some_object(2);
  store.add_remote(remote, prism::node_id{prism::unique_id::random()});
  store.add_ready(local, prism::detail::value{});
  store.add_task_ref(remote);
  store.release(remote);
  BOOST_TEST(freed.empty()); // a task still holds it
  store.release_task_ref(remote);
  store.release(local);
  BOOST_REQUIRE(freed.size() == 1u);
  BOOST_TEST((freed[0] == remote));
  BOOST_TEST(store.size() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
