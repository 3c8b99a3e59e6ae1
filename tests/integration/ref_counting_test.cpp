// Exact reference counting across processes, in the scenarios of Ray's
// reference-count tests: an object lives while any process references it
// (in user code, in a submitted task, inside another object's value, or as
// a registered borrower), and is freed, with its node-store copy, as soon as
// none does. `objects_in_scope()` counts every entry of every store of the
// process, owned or borrowed: after each scenario it must return to where it
// started.

#include <boost/test/unit_test.hpp>

#include <memory>
#include <vector>

#include "cluster_fixture.hpp"

namespace ref_counting_test {

using prism_test::result_timeout;

using int_refs = std::vector<prism::object_ref<int>>;

/// Above the default `max_inline_object_bytes` (100 KiB).
constexpr std::size_t big_size = 200 * 1024;

using big_refs = std::vector<prism::object_ref<std::vector<char>>>;

/// Keeps the refs it is given after the call that gave them returns: a
/// borrower that outlives the task.
class holder {
public:
  static std::unique_ptr<holder> create() {
    return std::make_unique<holder>();
  }

  /// Starts out holding `refs` (given as a ref argument, resolved before the
  /// actor is made: the control store keeps the value for restarts).
  static std::unique_ptr<holder> create_with(int_refs refs) {
    auto h = std::make_unique<holder>();
    h->keep(std::move(refs));
    return h;
  }

  int keep(int_refs refs) {
    kept_.insert(kept_.end(), refs.begin(), refs.end());
    return static_cast<int>(kept_.size());
  }

  int keep_big(big_refs refs) {
    big_.insert(big_.end(), refs.begin(), refs.end());
    return static_cast<int>(big_.size());
  }

  int sum() {
    int total = 0;
    for (auto& r : kept_)
      total += prism::get(r, result_timeout);
    return total;
  }

  std::size_t big_size_sum() {
    std::size_t total = 0;
    for (auto& r : big_)
      total += prism::get(r, result_timeout).size();
    return total;
  }

  /// Passes what it holds on to another holder, and lets go of it.
  int hand_over(prism::actor_handle<holder> next) {
    auto n = prism::get(next.task(&holder::keep).remote(kept_), result_timeout);
    kept_.clear();
    return n;
  }

  int drop() {
    kept_.clear();
    big_.clear();
    return 0;
  }

  int_refs held() const {
    return kept_;
  }

private:
  int_refs kept_;
  big_refs big_;
};

/// A large value with a ref inside: kept in a node's store, not inline.
struct big_box {
  std::vector<char> bytes;
  prism::object_ref<int> ref;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, big_box& x) {
  return f(x.bytes, x.ref);
}

/// Gets a ref from the holder and returns it inside a large result.
big_box box_held_ref(prism::actor_handle<holder> h) {
  auto refs = prism::get(h.task(&holder::held).remote(), result_timeout);
  return big_box{std::vector<char>(big_size, 'b'), refs.at(0)};
}

int sum_refs(int_refs refs) {
  int total = 0;
  for (auto& r : refs)
    total += prism::get(r, result_timeout);
  return total;
}

/// Returns a ref to an object this task put: the task's worker owns it.
prism::object_ref<int> put_and_return(int x) {
  return prism::put(x);
}

/// Returns a ref to the result of a task it submitted.
prism::object_ref<int> submit_and_return(int x) {
  return prism::task(sum_refs).remote(int_refs{prism::put(x)});
}

/// Returns the ref it was given, inside a new vector: a borrowed ref handed
/// back.
int_refs return_borrowed(int_refs refs) {
  return refs;
}

/// Submits a task with the ref it borrowed and does not wait for it.
prism::object_ref<int> pass_on(int_refs refs) {
  return prism::task(sum_refs).remote(refs);
}

PRISM_REMOTE(ref_counting_test::holder::create,
             ref_counting_test::holder::create_with,
             ref_counting_test::box_held_ref, &ref_counting_test::holder::keep,
             &ref_counting_test::holder::keep_big,
             &ref_counting_test::holder::sum,
             &ref_counting_test::holder::big_size_sum,
             &ref_counting_test::holder::hand_over,
             &ref_counting_test::holder::drop, &ref_counting_test::holder::held,
             ref_counting_test::sum_refs, ref_counting_test::put_and_return,
             ref_counting_test::submit_and_return,
             ref_counting_test::return_borrowed, ref_counting_test::pass_on);

using namespace ref_counting_test;

namespace {

std::int64_t in_scope() {
  return prism::testing::objects_in_scope();
}

/// Waits until the process holds `baseline` objects again; false if it
/// still holds more at the deadline (a leak).
bool back_to(std::int64_t baseline) {
  return prism_test::wait_until([&] { return in_scope() == baseline; });
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(ref_counting, prism_test::cluster_fixture)

// Ray: TestNoBorrow. A task that reads a nested ref and keeps nothing.
BOOST_AUTO_TEST_CASE(a_nested_ref_is_freed_after_the_task_that_read_it) {
  auto baseline = in_scope();
  {
    auto x = prism::put(5);
    auto r = prism::task(sum_refs).remote(int_refs{x});
    BOOST_TEST(prism::get(r, result_timeout) == 5);
  }
  BOOST_TEST(back_to(baseline));
}

// Ray: TestSimpleBorrowerReferenceRemoved. An actor keeps a ref after the
// call returns: the object outlives the caller's refs, and goes when the
// actor lets go of it.
BOOST_AUTO_TEST_CASE(a_borrower_keeps_an_object_alive_until_it_drops_it) {
  auto h = prism::actor(holder::create).remote();
  BOOST_TEST(prism::get(h.task(&holder::drop).remote(), result_timeout) == 0);
  auto baseline = in_scope();
  {
    auto x = prism::put(42);
    BOOST_TEST(prism::get(h.task(&holder::keep).remote(int_refs{x}),
                          result_timeout) == 1);
  }
  // The driver holds no ref; the actor still reads the object.
  BOOST_TEST(prism::get(h.task(&holder::sum).remote(), result_timeout) == 42);
  BOOST_TEST(prism::get(h.task(&holder::drop).remote(), result_timeout) == 0);
  BOOST_TEST(back_to(baseline));
}

// Ray: TestSimpleBorrowerFailure. A borrower that dies ends its hold.
BOOST_AUTO_TEST_CASE(a_dead_borrower_no_longer_keeps_an_object) {
  auto baseline = in_scope();
  {
    auto h = prism::actor(holder::create).remote();
    {
      auto x = prism::put(7);
      BOOST_TEST(prism::get(h.task(&holder::keep).remote(int_refs{x}),
                            result_timeout) == 1);
    }
    prism::kill(h);
  }
  BOOST_TEST(back_to(baseline));
}

// Ray: TestBorrowerTree. A borrower passes the ref on to a second borrower
// and lets go of it; the object lives while the second one holds it.
BOOST_AUTO_TEST_CASE(a_ref_passed_from_borrower_to_borrower_stays_alive) {
  auto a = prism::actor(holder::create).remote();
  auto b = prism::actor(holder::create).remote();
  BOOST_TEST(prism::get(a.task(&holder::drop).remote(), result_timeout) == 0);
  BOOST_TEST(prism::get(b.task(&holder::drop).remote(), result_timeout) == 0);
  auto baseline = in_scope();
  {
    auto x = prism::put(9);
    BOOST_TEST(prism::get(a.task(&holder::keep).remote(int_refs{x}),
                          result_timeout) == 1);
  }
  BOOST_TEST(prism::get(a.task(&holder::hand_over).remote(b), result_timeout) ==
             1);
  BOOST_TEST(prism::get(b.task(&holder::sum).remote(), result_timeout) == 9);
  BOOST_TEST(prism::get(b.task(&holder::drop).remote(), result_timeout) == 0);
  BOOST_TEST(back_to(baseline));
}

// Ray: TestNestedObject. Three levels of puts: holding only the outermost
// keeps all three readable; dropping it frees all three.
BOOST_AUTO_TEST_CASE(an_object_keeps_the_objects_inside_it) {
  auto baseline = in_scope();
  {
    prism::object_ref<std::vector<int_refs>> outer;
    {
      auto inner = prism::put(3);
      auto mid = prism::put(int_refs{inner});
      outer = prism::put(std::vector<int_refs>{{inner}});
      (void)mid;
    }
    auto got = prism::get(outer, result_timeout);
    BOOST_REQUIRE(got.size() == 1u);
    BOOST_TEST(prism::get(got[0].at(0), result_timeout) == 3);
    // A task reads it as a borrower.
    BOOST_TEST(
        prism::get(prism::task(sum_refs).remote(got[0]), result_timeout) == 3);
  }
  BOOST_TEST(back_to(baseline));
}

// Ray: TestReturnObjectIdNoBorrow. A task returns a ref to an object its
// worker owns; it lives while the caller holds the result, and goes with
// it.
BOOST_AUTO_TEST_CASE(a_returned_ref_lives_with_the_result_that_holds_it) {
  auto baseline = in_scope();
  {
    auto outer = prism::task(put_and_return).remote(11);
    auto inner = prism::get(outer, result_timeout);
    BOOST_TEST(prism::get(inner, result_timeout) == 11);
    // A task can read it too, through its owner (the other worker).
    BOOST_TEST(prism::get(prism::task(sum_refs).remote(int_refs{inner}),
                          result_timeout) == 11);
  }
  BOOST_TEST(back_to(baseline));
}

// Ray: TestReturnIdChain. A task returns the result of a task it submitted.
BOOST_AUTO_TEST_CASE(a_returned_subtask_result_is_freed_with_its_holder) {
  auto baseline = in_scope();
  {
    auto outer = prism::task(submit_and_return).remote(4);
    auto inner = prism::get(outer, result_timeout);
    BOOST_TEST(prism::get(inner, result_timeout) == 4);
  }
  BOOST_TEST(back_to(baseline));
}

// Ray: TestReturnBorrowedId. A task hands back a ref it only borrowed.
BOOST_AUTO_TEST_CASE(a_borrowed_ref_handed_back_is_freed_once) {
  auto baseline = in_scope();
  {
    int_refs back;
    {
      auto x = prism::put(8);
      back = prism::get(prism::task(return_borrowed).remote(int_refs{x}),
                        result_timeout);
    }
    BOOST_REQUIRE(back.size() == 1u);
    BOOST_TEST(prism::get(back[0], result_timeout) == 8);
  }
  BOOST_TEST(back_to(baseline));
}

// Ray: TestSimpleBorrower. A task submits a task with the ref it borrowed
// and returns at once; the caller drops everything; the inner task still
// reads the object.
BOOST_AUTO_TEST_CASE(a_ref_passed_on_by_a_finished_task_stays_alive) {
  auto baseline = in_scope();
  {
    prism::object_ref<prism::object_ref<int>> outer;
    {
      auto x = prism::put(6);
      outer = prism::task(pass_on).remote(int_refs{x});
    }
    auto inner = prism::get(outer, result_timeout);
    BOOST_TEST(prism::get(inner, result_timeout) == 6);
  }
  BOOST_TEST(back_to(baseline));
}

// Ray: TestDuplicateBorrower. The same borrower gets the same ref in two
// calls (and twice in one value): it registers once, keeps the object while
// it holds any copy, and lets it go once.
BOOST_AUTO_TEST_CASE(a_borrower_given_a_ref_twice_lets_it_go_once) {
  auto h = prism::actor(holder::create).remote();
  BOOST_TEST(prism::get(h.task(&holder::drop).remote(), result_timeout) == 0);
  auto baseline = in_scope();
  {
    auto x = prism::put(2);
    BOOST_TEST(prism::get(h.task(&holder::keep).remote(int_refs{x}),
                          result_timeout) == 1);
    BOOST_TEST(prism::get(h.task(&holder::keep).remote(int_refs{x, x}),
                          result_timeout) == 3);
  }
  BOOST_TEST(prism::get(h.task(&holder::sum).remote(), result_timeout) == 6);
  BOOST_TEST(prism::get(h.task(&holder::drop).remote(), result_timeout) == 0);
  BOOST_TEST(back_to(baseline));
}

// A large result (kept in a node's store) holds a ref that its caller owns
// and no longer references: the ref stays alive through the result.
BOOST_AUTO_TEST_CASE(a_large_result_keeps_a_ref_its_caller_owns) {
  auto h = prism::actor(holder::create).remote();
  BOOST_TEST(prism::get(h.task(&holder::drop).remote(), result_timeout) == 0);
  auto baseline = in_scope();
  {
    prism::object_ref<big_box> boxed;
    {
      auto x = prism::put(13);
      BOOST_TEST(prism::get(h.task(&holder::keep).remote(int_refs{x}),
                            result_timeout) == 1);
    }
    boxed = prism::task(box_held_ref).remote(h);
    auto box = prism::get(boxed, result_timeout);
    BOOST_TEST(box.bytes.size() == big_size);
    // The actor lets go: the result is what keeps the object now.
    BOOST_TEST(prism::get(h.task(&holder::drop).remote(), result_timeout) == 0);
    BOOST_TEST(prism::get(box.ref, result_timeout) == 13);
  }
  BOOST_TEST(back_to(baseline));
}

// The refs inside an actor's creation argument stay alive for the actor (the
// control store keeps the value, to make the actor again on a restart).
BOOST_AUTO_TEST_CASE(refs_inside_an_actor_argument_stay_alive_for_it) {
  prism::actor_handle<holder> h;
  {
    auto x = prism::put(21);
    auto outer = prism::put(int_refs{x});
    h = prism::actor(holder::create_with).remote(outer);
  }
  BOOST_TEST(prism::get(h.task(&holder::sum).remote(), result_timeout) == 21);
}

// A ref made through one client and read through another: the reader
// borrows it for the read only, and keeps nothing after.
BOOST_AUTO_TEST_CASE(reading_another_clients_ref_keeps_nothing) {
  auto job = prism::client::connect();
  auto baseline = in_scope();
  {
    auto x = job.put(17);
    BOOST_TEST(prism::get(x, result_timeout) == 17);
    auto [ready, rest] = prism::wait(std::vector{x}, 1, result_timeout);
    BOOST_TEST(ready.size() == 1u);
  }
  BOOST_TEST(back_to(baseline));
  job.shutdown();
}

// Many objects through many borrowers: nothing is left over.
BOOST_AUTO_TEST_CASE(many_nested_refs_leave_nothing_behind) {
  auto baseline = in_scope();
  {
    std::vector<prism::object_ref<int>> results;
    for (int i = 0; i < 200; ++i) {
      int_refs refs{prism::put(i), prism::put(1)};
      results.push_back(prism::task(sum_refs).remote(refs));
    }
    int total = 0;
    for (auto& r : results)
      total += prism::get(r, result_timeout);
    BOOST_TEST(total == 199 * 200 / 2 + 200);
  }
  BOOST_TEST(back_to(baseline));
}

BOOST_AUTO_TEST_SUITE_END()

// A large object's copy in a node's store goes with the last reference,
// wherever it was: in the driver, or nested in a borrower.
BOOST_AUTO_TEST_CASE(
    a_borrowed_large_object_leaves_its_node_store_when_dropped) {
  prism::testing::local_cluster cluster{{{{"CPU", 2}}}};
  auto head = cluster.node(0);
  auto objects = [&] {
    auto usage = cluster.object_store(head);
    BOOST_REQUIRE(usage.has_value());
    return usage->objects;
  };
  auto h = prism::actor(holder::create).remote();
  {
    auto big = prism::put(std::vector<char>(big_size, 'x'));
    BOOST_TEST(objects() == 1u);
    BOOST_TEST(prism::get(h.task(&holder::keep_big).remote(big_refs{big}),
                          result_timeout) == 1);
  }
  // Only the actor holds it now: the copy stays, and reads.
  BOOST_TEST(prism::get(h.task(&holder::big_size_sum).remote(),
                        result_timeout) == big_size);
  BOOST_TEST(objects() == 1u);
  BOOST_TEST(prism::get(h.task(&holder::drop).remote(), result_timeout) == 0);
  BOOST_TEST(prism_test::wait_until([&] { return objects() == 0u; }));
}

} // namespace ref_counting_test
