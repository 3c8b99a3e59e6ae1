// A node's object store: it keeps values and counts their bytes, a later
// copy replaces an earlier one, the free of a stale run leaves a later run's
// copy alone, and losing the store drops everything.

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "raylet/node_object_store.hpp"

namespace node_object_store_test {

using prism::actors::node_object_store;

namespace {

prism::object_id some_object(std::uint64_t seq) {
  return prism::object_id{
      prism::task_id{prism::worker_id{prism::unique_id::random()}, seq}, 1};
}

prism::detail::value bytes_of(std::size_t n, char fill = 'x') {
  prism::detail::value v;
  v.bytes = std::make_shared<const prism::detail::byte_buffer>(n, fill);
  return v;
}

node_object_store::settings
settings_with(std::shared_ptr<prism::internal::object_arena> arena) {
  node_object_store::settings s;
  s.arena = std::move(arena);
  return s;
}

} // namespace

BOOST_AUTO_TEST_SUITE(node_object_store_contents)

BOOST_AUTO_TEST_CASE(a_kept_object_is_found_and_counted) {
  node_object_store store;
  auto id = some_object(1);
  BOOST_TEST(store.keep(id, bytes_of(10), 1).empty());
  auto found = store.find(id);
  BOOST_TEST_REQUIRE(found != nullptr);
  BOOST_TEST((found->value == bytes_of(10)));
  BOOST_TEST(store.size() == 1u);
  BOOST_TEST(store.bytes() == 10u);
}

BOOST_AUTO_TEST_CASE(an_object_never_kept_is_not_found) {
  node_object_store store;
  BOOST_TEST(store.keep(some_object(1), bytes_of(10), 1).empty());
  BOOST_TEST(store.find(some_object(2)) == nullptr);
}

BOOST_AUTO_TEST_CASE(a_later_copy_replaces_the_earlier_one) {
  node_object_store store;
  auto id = some_object(1);
  BOOST_TEST(store.keep(id, bytes_of(10, 'a'), 1).empty());
  BOOST_TEST(store.keep(id, bytes_of(4, 'b'), 2).empty());
  BOOST_TEST((store.find(id)->value == bytes_of(4, 'b')));
  BOOST_TEST(store.size() == 1u);
  BOOST_TEST(store.bytes() == 4u);
}

BOOST_AUTO_TEST_CASE(free_drops_the_copy_of_its_run) {
  node_object_store store;
  auto id = some_object(1);
  BOOST_TEST(store.keep(id, bytes_of(10), 2).empty());
  BOOST_TEST(store.free(id, 2));
  BOOST_TEST(store.find(id) == nullptr);
  BOOST_TEST(store.size() == 0u);
  BOOST_TEST(store.bytes() == 0u);
}

BOOST_AUTO_TEST_CASE(the_free_of_a_stale_run_keeps_a_later_copy) {
  node_object_store store;
  auto id = some_object(1);
  BOOST_TEST(store.keep(id, bytes_of(10), 2).empty());
  BOOST_TEST(!store.free(id, 1));
  BOOST_TEST(store.find(id) != nullptr);
  BOOST_TEST(store.bytes() == 10u);
}

BOOST_AUTO_TEST_CASE(freeing_an_object_never_kept_changes_nothing) {
  node_object_store store;
  BOOST_TEST(store.keep(some_object(1), bytes_of(10), 0).empty());
  BOOST_TEST(!store.free(some_object(2), 0));
  BOOST_TEST(store.size() == 1u);
  BOOST_TEST(store.bytes() == 10u);
}

BOOST_AUTO_TEST_CASE(clear_drops_every_object) {
  node_object_store store;
  auto id = some_object(1);
  BOOST_TEST(store.keep(id, bytes_of(10), 1).empty());
  BOOST_TEST(store.keep(some_object(2), bytes_of(5), 0).empty());
  store.clear();
  BOOST_TEST(store.find(id) == nullptr);
  BOOST_TEST(store.size() == 0u);
  BOOST_TEST(store.bytes() == 0u);
}

// -- with an arena ------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_kept_value_lies_in_the_arena_and_reads_the_same) {
  auto arena = prism::internal::object_arena::create(
      1 << 20, prism::unique_id::random());
  node_object_store store{settings_with(arena)};
  auto id = some_object(1);
  BOOST_TEST(store.keep(id, bytes_of(1000, 'q'), 1).empty());
  auto found = store.find(id);
  BOOST_TEST_REQUIRE(found != nullptr);
  BOOST_TEST((found->value == bytes_of(1000, 'q')));
  auto at = store.arena_offset(found->value);
  BOOST_TEST_REQUIRE(at.has_value());
  BOOST_TEST(arena->holds(found->value.bytes.data()));
  BOOST_TEST(arena->offset_of(found->value.bytes.data()) == *at);
  BOOST_TEST(arena->used() >= 1000u);
  // Freed, its room is the arena's again.
  BOOST_TEST(store.free(id, 1));
  BOOST_TEST(arena->used() == 0u);
}

BOOST_AUTO_TEST_CASE(bytes_still_read_keep_their_room_after_a_free) {
  auto arena = prism::internal::object_arena::create(
      1 << 20, prism::unique_id::random());
  node_object_store store{settings_with(arena)};
  auto id = some_object(1);
  BOOST_TEST(store.keep(id, bytes_of(1000, 'q'), 1).empty());
  auto read = store.find(id)->value.bytes;
  store.free(id, 1);
  BOOST_TEST(arena->used() >= 1000u);
  BOOST_TEST(std::string(read.begin(), read.end()) == std::string(1000, 'q'));
  read = {};
  BOOST_TEST(arena->used() == 0u);
}

BOOST_AUTO_TEST_CASE(
    a_value_past_the_arenas_room_is_refused_with_nowhere_to_spill) {
  auto arena =
      prism::internal::object_arena::create(4096, prism::unique_id::random());
  node_object_store store{settings_with(arena)};
  auto id = some_object(1);
  auto why = store.keep(id, bytes_of(10000, 'z'), 1);
  BOOST_TEST(why.find("no spill directory") != std::string::npos);
  BOOST_TEST(store.find(id) == nullptr);
  BOOST_TEST(store.bytes() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace node_object_store_test
