// A node store's arena: blocks are cut from one shared mapping, given back
// when their last holder goes, merged with their free neighbours, and handed
// out again before fresh memory; a reader on the host maps it read-only and
// finds the bytes a block holds, and a file that is not the arena it was
// told of is refused.

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <string>
#include <thread>

#include "prism/internal/object_arena.hpp"

namespace object_arena_test {

using prism::unique_id;
using prism::internal::arena_view;
using prism::internal::object_arena;

constexpr std::uint64_t mib = std::uint64_t{1} << 20;

BOOST_AUTO_TEST_SUITE(object_arena_blocks)

BOOST_AUTO_TEST_CASE(a_readers_view_sees_what_a_block_holds) {
  auto mark = unique_id::random();
  auto arena = object_arena::create(4 * mib, mark);
  auto block = arena->allocate(11);
  BOOST_TEST_REQUIRE(block != nullptr);
  std::memcpy(block.get(), "hello arena", 11);
  std::string why;
  auto view = arena_view::open(arena->path(), arena->capacity(), mark, why);
  BOOST_TEST_REQUIRE(view != nullptr, why);
  auto* at = view->at(arena->offset_of(block.get()), 11);
  BOOST_TEST_REQUIRE(at != nullptr);
  BOOST_TEST(std::string(at, 11) == "hello arena");
  // Nothing outside the blocks' part of the mapping.
  BOOST_TEST(view->at(0, 8) == nullptr);
  BOOST_TEST(view->at(arena->capacity() - 4, 8) == nullptr);
}

BOOST_AUTO_TEST_CASE(a_writable_view_fills_a_block_the_arena_handed_out) {
  auto mark = unique_id::random();
  auto arena = object_arena::create(4 * mib, mark);
  auto block = arena->allocate(5);
  BOOST_TEST_REQUIRE(block != nullptr);
  auto offset = arena->offset_of(block.get());
  std::string why;
  auto reader = arena_view::open(arena->path(), arena->capacity(), mark, why);
  BOOST_TEST_REQUIRE(reader != nullptr, why);
  BOOST_TEST(reader->writable_at(offset, 5) == nullptr);
  auto writer =
      arena_view::open(arena->path(), arena->capacity(), mark, why, true);
  BOOST_TEST_REQUIRE(writer != nullptr, why);
  auto* at = writer->writable_at(offset, 5);
  BOOST_TEST_REQUIRE(at != nullptr);
  std::memcpy(at, "fresh", 5);
  BOOST_TEST(std::string(block.get(), 5) == "fresh");
  BOOST_TEST(std::string(reader->at(offset, 5), 5) == "fresh");
}

BOOST_AUTO_TEST_CASE(a_view_of_another_arena_or_no_arena_is_refused) {
  auto arena = object_arena::create(mib, unique_id::random());
  std::string why;
  BOOST_TEST(arena_view::open(arena->path(), arena->capacity(),
                              unique_id::random(), why) == nullptr);
  BOOST_TEST(why.find("not the object store") != std::string::npos, why);
  why.clear();
  BOOST_TEST(arena_view::open("/proc/self/fd/999999", arena->capacity(),
                              arena->mark(), why) == nullptr);
  BOOST_TEST(!why.empty());
  why.clear();
  BOOST_TEST(arena_view::open(arena->path(), arena->capacity() + 4096,
                              arena->mark(), why) == nullptr);
  BOOST_TEST(!why.empty());
}

BOOST_AUTO_TEST_CASE(memory_given_back_is_handed_out_before_fresh_memory) {
  auto arena = object_arena::create(64 * mib, unique_id::random());
  auto first = arena->allocate(8 * mib);
  BOOST_TEST_REQUIRE(first != nullptr);
  auto at = arena->offset_of(first.get());
  auto faulted = arena->faulted();
  BOOST_TEST(arena->used() == 8 * mib);
  first.reset();
  BOOST_TEST(arena->used() == 0u);
  for (int i = 0; i < 10; ++i) {
    auto again = arena->allocate(8 * mib);
    BOOST_TEST_REQUIRE(again != nullptr);
    BOOST_TEST(arena->offset_of(again.get()) == at);
  }
  BOOST_TEST(arena->faulted() == faulted);
}

BOOST_AUTO_TEST_CASE(freed_neighbours_merge_into_one_range) {
  auto arena = object_arena::create(16 * mib, unique_id::random());
  auto room = arena->capacity() - object_arena::header_bytes;
  auto a = arena->allocate(4 * mib);
  auto b = arena->allocate(4 * mib);
  auto c = arena->allocate(4 * mib);
  BOOST_TEST_REQUIRE((a && b && c));
  // Nothing as large as the whole while they are held.
  BOOST_TEST(arena->allocate(room) == nullptr);
  b.reset();
  a.reset();
  c.reset();
  auto whole = arena->allocate(room);
  BOOST_TEST(whole != nullptr);
}

BOOST_AUTO_TEST_CASE(a_full_arena_hands_out_nothing_and_stays_whole) {
  auto arena = object_arena::create(2 * mib, unique_id::random());
  auto a = arena->allocate(mib);
  BOOST_TEST_REQUIRE(a != nullptr);
  BOOST_TEST(arena->allocate(2 * mib) == nullptr);
  BOOST_TEST(arena->used() == mib);
  auto b = arena->allocate(mib / 2);
  BOOST_TEST(b != nullptr);
}

BOOST_AUTO_TEST_CASE(a_block_given_back_on_another_thread_is_freed) {
  auto arena = object_arena::create(4 * mib, unique_id::random());
  auto block = arena->allocate(mib);
  std::thread other{[held = std::move(block)]() mutable { held.reset(); }};
  other.join();
  BOOST_TEST(arena->used() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace object_arena_test
