// The memory store: once its owner is gone, what was pending fails, and so
// does everything added pending afterwards, so that no `get` waits forever;
// and its reference counts: borrowed entries, borrowers, contained refs.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "prism/internal/memory_store.hpp"

namespace memory_store_test {

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

// A cancelled task's waits end early: its flag is set, and the store is
// told to wake the waits that have one. The entries stay pending.
BOOST_AUTO_TEST_CASE(a_set_stop_flag_ends_waits_early) {
  memory_store store;
  auto one = some_object(4);
  auto other = some_object(5);
  store.add_pending(one);
  store.add_pending(other);
  std::atomic<bool> stop{false};
  auto deadline = memory_store::clock::now() + std::chrono::seconds{30};
  std::atomic<int> ended{0};
  std::thread single{[&] {
    auto r = store.wait_one(one, deadline, &stop);
    BOOST_TEST((r.st == memory_store::state::pending));
    ++ended;
  }};
  std::thread many{[&] {
    auto ready = store.wait_many({one, other}, 1, deadline, &stop);
    BOOST_TEST(!ready[0]);
    BOOST_TEST(!ready[1]);
    ++ended;
  }};
  // A wake with the flag clear wakes no one for good.
  store.wake_stopped();
  stop = true;
  store.wake_stopped();
  single.join();
  many.join();
  BOOST_TEST(ended.load() == 2);
  BOOST_TEST((memory_store::clock::now() < deadline));
  // A wait that starts with the flag set returns at once.
  auto r = store.wait_one(one, deadline, &stop);
  BOOST_TEST((r.st == memory_store::state::pending));
}

// An asynchronous call waits on an entry with a callback. Once cancelled,
// it lets go of its ref: the entry goes, and the callback with it, unrun.
BOOST_AUTO_TEST_CASE(a_callback_does_not_keep_its_entry_alive) {
  memory_store store;
  auto id = some_object(6);
  store.add_pending(id);
  auto held = std::make_shared<int>(0);
  std::weak_ptr<int> watch = held;
  bool ran = false;
  BOOST_TEST(
      store.on_ready(id, [held = std::move(held), &ran] { ran = true; }));
  BOOST_TEST(store.size() == 1u);
  store.release(id);
  BOOST_TEST(store.size() == 0u);
  BOOST_TEST(watch.expired());
  BOOST_TEST(!ran);
  // Completing it later finds nothing to complete.
  BOOST_TEST(!store.complete(id, prism::detail::value{}));
  BOOST_TEST(!ran);
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
  store.set_hook([&](const memory_store::event& e) {
    if (e.what == memory_store::event::kind::freed)
      freed.push_back(e.id);
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

// -- reference counts
// -----------------------------------------------------------

namespace {

using event = memory_store::event;

struct recorder {
  std::vector<event> events;

  void attach(memory_store& store) {
    store.set_hook([this](const event& e) { events.push_back(e); });
  }

  std::size_t count(event::kind k, const prism::object_id& id) const {
    std::size_t n = 0;
    for (const auto& e : events)
      if (e.what == k && e.id == id)
        ++n;
    return n;
  }
};

prism::worker_id some_worker() {
  return prism::worker_id{prism::unique_id::random()};
}

prism::detail::value holding(std::vector<prism::detail::contained_ref> refs) {
  prism::detail::value v;
  v.refs = std::move(refs);
  return v;
}

} // namespace

BOOST_AUTO_TEST_SUITE(memory_store_counts)

BOOST_AUTO_TEST_CASE(a_borrowed_entry_registers_once_and_reports_its_end) {
  memory_store store;
  recorder rec;
  rec.attach(store);
  auto self = some_worker();
  auto owner = some_worker();
  store.set_self(self);
  auto id = some_object(1);
  BOOST_TEST(store.borrow(id, owner, {}));
  BOOST_TEST(!store.borrow(id, owner, {})); // a second local ref, no new entry
  BOOST_TEST(rec.count(event::kind::borrowed, id) == 1u);
  store.release(id);
  BOOST_TEST(rec.count(event::kind::freed, id) == 0u);
  store.release(id);
  BOOST_REQUIRE(rec.count(event::kind::freed, id) == 1u);
  BOOST_TEST((rec.events.back().owner == owner));
  BOOST_TEST(rec.events.back().registrations == 1);
  BOOST_TEST(store.size() == 0u);
}

BOOST_AUTO_TEST_CASE(own_objects_live_while_borrowers_are_registered) {
  memory_store store;
  auto self = some_worker();
  store.set_self(self);
  auto id = some_object(1);
  auto b1 = some_worker();
  auto b2 = some_worker();
  store.add_ready(id, prism::detail::value{});
  BOOST_TEST(store.add_borrower(id, b1, 1));
  BOOST_TEST(store.add_borrower(id, b1, 1));
  BOOST_TEST(store.add_borrower(id, b2, 1));
  BOOST_TEST(store.count_of(id).borrowers == 2u);
  store.release(id);
  BOOST_TEST(store.size() == 1u);
  store.remove_borrower(id, b1, 1);
  BOOST_TEST(store.size() == 1u); // b1 registered twice
  store.drop_borrower(b2);        // b2 died
  BOOST_TEST(store.size() == 1u);
  store.remove_borrower(id, b1, 1);
  BOOST_TEST(store.size() == 0u);
  BOOST_TEST(!store.add_borrower(id, b1, 1)); // gone: nothing to hold
}

// A registration comes from the process that handed the ref on, its end
// from the borrower: the end can arrive first. It is kept until the
// registration cancels it, and keeps nothing alive meanwhile.
BOOST_AUTO_TEST_CASE(
    a_borrower_that_ends_before_it_is_registered_holds_nothing) {
  memory_store store;
  store.set_self(some_worker());
  auto id = some_object(1);
  auto b = some_worker();
  store.add_ready(id, prism::detail::value{});
  store.remove_borrower(id, b, 1); // ahead of its registration
  BOOST_TEST(store.count_of(id).borrowers == 0u);
  BOOST_TEST(store.add_borrower(id, b, 1)); // cancels it
  BOOST_TEST(store.count_of(id).borrowers == 0u);
  BOOST_TEST(store.add_borrower(id, b, 1)); // a registration of its own
  BOOST_TEST(store.count_of(id).borrowers == 1u);
  store.release(id);
  BOOST_TEST(store.size() == 1u);
  store.remove_borrower(id, b, 1);
  BOOST_TEST(store.size() == 0u);
}

// An end that came early does not keep the object alive on its own.
BOOST_AUTO_TEST_CASE(an_early_end_keeps_nothing_alive) {
  memory_store store;
  store.set_self(some_worker());
  auto id = some_object(1);
  store.add_ready(id, prism::detail::value{});
  store.remove_borrower(id, some_worker(), 2);
  store.release(id);
  BOOST_TEST(store.size() == 0u);
}

BOOST_AUTO_TEST_CASE(a_value_holds_the_refs_inside_it_until_it_is_freed) {
  memory_store store;
  recorder rec;
  rec.attach(store);
  auto self = some_worker();
  auto other = some_worker();
  store.set_self(self);
  auto inner_own = some_object(1);
  auto inner_borrowed = some_object(2);
  auto outer = some_object(3);
  store.add_ready(inner_own, prism::detail::value{});
  store.add_ready(
      outer, holding({{inner_own, self, {}}, {inner_borrowed, other, {}}}));
  // The borrowed ref had no entry: the value's arrival registers it.
  BOOST_TEST(rec.count(event::kind::borrowed, inner_borrowed) == 1u);
  BOOST_TEST(store.count_of(inner_own).contained == 1);
  store.release(inner_own);
  BOOST_TEST(store.size() == 3u); // held by the outer value
  store.release(outer);
  BOOST_TEST(store.size() == 0u);
  BOOST_TEST(rec.count(event::kind::freed, inner_borrowed) == 1u);
}

BOOST_AUTO_TEST_CASE(
    a_result_registered_by_its_worker_does_not_register_again) {
  memory_store store;
  recorder rec;
  rec.attach(store);
  store.set_self(some_worker());
  auto other = some_worker();
  auto result = some_object(1);
  auto inner = some_object(2);
  store.add_pending(result);
  BOOST_TEST(store.complete(result, holding({{inner, other, {}}}),
                            memory_store::arrival::registered_by_sender));
  BOOST_TEST(rec.count(event::kind::borrowed, inner) == 0u);
  store.release(result);
  BOOST_REQUIRE(rec.count(event::kind::freed, inner) == 1u);
  BOOST_TEST(rec.events.back().registrations == 1);
}

BOOST_AUTO_TEST_CASE(freeing_a_long_chain_frees_every_link) {
  memory_store store;
  auto self = some_worker();
  store.set_self(self);
  constexpr std::uint64_t links = 10000;
  // Each link holds the one before; only the last has a local ref.
  std::vector<prism::object_id> ids;
  ids.push_back(some_object(0));
  store.add_ready(ids[0], prism::detail::value{});
  for (std::uint64_t i = 1; i < links; ++i) {
    ids.push_back(some_object(i));
    store.add_ready(ids[i], holding({{ids[i - 1], self, {}}}));
    store.release(ids[i - 1]);
  }
  BOOST_TEST(store.size() == links);
  store.release(ids.back());
  BOOST_TEST(store.size() == 0u);
}

BOOST_AUTO_TEST_CASE(live_entries_counts_every_store) {
  auto before = memory_store::live_entries();
  {
    memory_store a;
    memory_store b;
    a.add_ready(some_object(1), prism::detail::value{});
    b.add_pending(some_object(2));
    BOOST_TEST(memory_store::live_entries() == before + 2);
  }
  BOOST_TEST(memory_store::live_entries() == before);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace memory_store_test
