// The memory store once its owner is gone: what was pending fails, and so
// does everything added pending afterwards, so that no `get` waits forever.

#include <boost/test/unit_test.hpp>

#include <chrono>

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
