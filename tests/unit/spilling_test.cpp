// Spilling: a node's store that cannot hold a value in memory writes others
// (or the value itself) to files of its spill directory, reads them back
// when asked, and deletes a file once nothing in it is kept. A node opening
// the directory deletes the files of nodes that are gone.

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "raylet/node_object_store.hpp"
#include "raylet/spill_directory.hpp"

namespace spilling_test {

using prism::actors::node_object_store;
using prism::actors::spill_directory;
namespace fs = std::filesystem;

namespace {

/// A directory of its own, removed at the end of the test.
struct temp_dir {
  std::string path;

  temp_dir() {
    auto base = fs::temp_directory_path() /
                ("prism-spill-test-" + prism::unique_id::random().hex());
    path = base.string();
  }

  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }

  /// The spill files in it.
  std::vector<std::string> spill_files() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator{path, ec})
      if (e.path().extension() == ".spill")
        names.push_back(e.path().filename().string());
    return names;
  }
};

prism::node_id some_node() {
  return prism::node_id{prism::unique_id::random()};
}

prism::object_id some_object(std::uint64_t seq) {
  return prism::object_id{
      prism::task_id{prism::worker_id{prism::unique_id::random()}, seq}, 1};
}

/// `n` bytes in a pattern that differs by `seed`.
prism::detail::value patterned(std::size_t n, int seed) {
  auto buf = std::make_shared<prism::detail::byte_buffer>(n);
  for (std::size_t i = 0; i < n; ++i)
    (*buf)[i] =
        static_cast<char>((i * 31 + static_cast<std::size_t>(seed)) % 251);
  prism::detail::value v;
  v.tag = 42;
  v.bytes = std::move(buf);
  return v;
}

std::string text_of(const prism::detail::shared_bytes& b) {
  return std::string(b.begin(), b.end());
}

std::string text_of(const prism::detail::value& v) {
  return text_of(v.bytes);
}

/// The whole payload of `id`, read from the store wherever it lies.
std::string read_all(node_object_store& store, const prism::object_id& id) {
  std::string why;
  auto size = store.find(id)->size;
  auto bytes = store.read(id, 0, size, why);
  BOOST_TEST(why.empty());
  return text_of(bytes);
}

constexpr std::uint64_t kib = 1024;

/// A store of `capacity` bytes on the heap, spilling to `dir`.
node_object_store heap_store(const temp_dir& dir, std::uint64_t capacity,
                             std::uint64_t min_spill = 0) {
  node_object_store::settings s;
  s.capacity = capacity;
  s.spill = spill_directory::open(dir.path, some_node());
  s.min_spill_bytes = min_spill;
  return node_object_store{s};
}

/// A store in `arena`, spilling to `dir`, one object at a time.
node_object_store
arena_store(const temp_dir& dir,
            std::shared_ptr<prism::internal::object_arena> arena) {
  node_object_store::settings s;
  s.arena = std::move(arena);
  s.spill = spill_directory::open(dir.path, some_node());
  s.min_spill_bytes = 0;
  return node_object_store{s};
}

} // namespace

BOOST_AUTO_TEST_SUITE(spill_directory_files)

BOOST_AUTO_TEST_CASE(parts_written_read_back_the_same) {
  temp_dir dir;
  auto spill = spill_directory::open(dir.path, some_node());
  std::string a(1000, 'a'), b(3000, 'b');
  std::string why;
  auto file = spill->write({{a.data(), a.size()}, {b.data(), b.size()}}, why);
  BOOST_TEST_REQUIRE(file != nullptr, why);
  BOOST_TEST(file->size() == 4000u);
  std::string back(3000, '\0');
  BOOST_TEST(file->read(1000, back.data(), 3000).empty());
  BOOST_TEST(back == b);
  BOOST_TEST(spill->files() == 1u);
  BOOST_TEST(spill->bytes() == 4000u);
}

BOOST_AUTO_TEST_CASE(a_read_past_the_end_is_refused) {
  temp_dir dir;
  auto spill = spill_directory::open(dir.path, some_node());
  std::string a(100, 'a');
  std::string why;
  auto file = spill->write({{a.data(), a.size()}}, why);
  BOOST_TEST_REQUIRE(file != nullptr);
  char out[64];
  auto error = file->read(90, out, 64);
  BOOST_TEST(error.find("past the end") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_file_is_deleted_when_its_last_handle_goes) {
  temp_dir dir;
  auto spill = spill_directory::open(dir.path, some_node());
  std::string a(100, 'a');
  std::string why;
  auto file = spill->write({{a.data(), a.size()}}, why);
  BOOST_TEST_REQUIRE(file != nullptr);
  auto path = file->path();
  BOOST_TEST(fs::exists(path));
  file.reset();
  BOOST_TEST(!fs::exists(path));
  BOOST_TEST(spill->files() == 0u);
  BOOST_TEST(spill->bytes() == 0u);
}

BOOST_AUTO_TEST_CASE(the_files_of_a_gone_node_are_deleted_when_another_opens) {
  temp_dir dir;
  std::string a(100, 'a');
  std::string why;
  // What a killed node leaves: its lock file, unlocked, and a spill file.
  auto dead = some_node().hex();
  fs::create_directories(dir.path);
  std::ofstream{dir.path + "/prism-" + dead + ".lock"};
  std::ofstream{dir.path + "/prism-" + dead + "-1.spill"} << a;
  // A live node keeps its files.
  auto alive = spill_directory::open(dir.path, some_node());
  BOOST_TEST(alive->swept() == 1u);
  auto kept = alive->write({{a.data(), a.size()}}, why);
  BOOST_TEST_REQUIRE(kept != nullptr);
  auto next = spill_directory::open(dir.path, some_node());
  BOOST_TEST(next->swept() == 0u);
  auto files = dir.spill_files();
  BOOST_TEST_REQUIRE(files.size() == 1u);
  BOOST_TEST(dir.path + "/" + files[0] == kept->path());
  BOOST_TEST(!fs::exists(dir.path + "/prism-" + dead + ".lock"));
}

BOOST_AUTO_TEST_CASE(the_files_of_a_node_still_holding_its_lock_stay) {
  temp_dir dir;
  std::string a(100, 'a');
  std::string why;
  auto first = spill_directory::open(dir.path, some_node());
  auto file = first->write({{a.data(), a.size()}}, why);
  BOOST_TEST_REQUIRE(file != nullptr);
  auto second = spill_directory::open(dir.path, some_node());
  BOOST_TEST(second->swept() == 0u);
  BOOST_TEST(fs::exists(file->path()));
}

BOOST_AUTO_TEST_CASE(a_write_into_a_missing_directory_says_why) {
  temp_dir dir;
  auto spill = spill_directory::open(dir.path, some_node());
  fs::remove_all(dir.path);
  std::string a(100, 'a');
  std::string why;
  BOOST_TEST(spill->write({{a.data(), a.size()}}, why) == nullptr);
  BOOST_TEST(why.find("cannot be made") != std::string::npos);
  BOOST_TEST(spill->files() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(node_object_store_spilling)

BOOST_AUTO_TEST_CASE(a_store_past_its_bound_spills_and_reads_back_every_byte) {
  temp_dir dir;
  auto store = heap_store(dir, 64 * kib);
  std::vector<prism::object_id> ids;
  for (int i = 0; i < 10; ++i) {
    ids.push_back(some_object(static_cast<std::uint64_t>(i)));
    BOOST_TEST(store.keep(ids.back(), patterned(16 * kib, i), 1).empty());
    BOOST_TEST(store.bytes_in_memory() <= 64 * kib);
  }
  BOOST_TEST(store.size() == 10u);
  BOOST_TEST(store.bytes() == 160 * kib);
  BOOST_TEST(store.spilled_now() >= 6u);
  for (int i = 0; i < 10; ++i)
    BOOST_TEST(read_all(store, ids[static_cast<std::size_t>(i)]) ==
               text_of(patterned(16 * kib, i)));
}

BOOST_AUTO_TEST_CASE(small_objects_spilled_together_share_a_file) {
  temp_dir dir;
  auto store = heap_store(dir, 64 * kib, 48 * kib);
  for (int i = 0; i < 5; ++i)
    BOOST_TEST(store
                   .keep(some_object(static_cast<std::uint64_t>(i)),
                         patterned(16 * kib, i), 1)
                   .empty());
  // The fifth made room by spilling at least 48 KiB: three objects, one
  // file.
  BOOST_TEST(store.spilled_now() == 3u);
  BOOST_TEST(store.spill()->files() == 1u);
}

BOOST_AUTO_TEST_CASE(a_spill_file_goes_once_every_object_in_it_is_freed) {
  temp_dir dir;
  auto store = heap_store(dir, 32 * kib, 32 * kib);
  std::vector<prism::object_id> ids;
  for (int i = 0; i < 4; ++i) {
    ids.push_back(some_object(static_cast<std::uint64_t>(i)));
    BOOST_TEST(store.keep(ids.back(), patterned(16 * kib, i), 1).empty());
  }
  BOOST_TEST_REQUIRE(dir.spill_files().size() == 1u);
  // The first two are in the file: one freed leaves it, both free it.
  BOOST_TEST(store.free(ids[0], 1));
  BOOST_TEST(dir.spill_files().size() == 1u);
  BOOST_TEST(store.free(ids[1], 1));
  BOOST_TEST(dir.spill_files().empty());
  BOOST_TEST(store.spill()->bytes() == 0u);
}

BOOST_AUTO_TEST_CASE(primary_copies_spill_before_secondary_ones) {
  temp_dir dir;
  auto store = heap_store(dir, 48 * kib);
  auto secondary = some_object(1);
  auto primary = some_object(2);
  BOOST_TEST(store
                 .keep(secondary, patterned(16 * kib, 1), 1,
                       node_object_store::copy_kind::secondary)
                 .empty());
  BOOST_TEST(store.keep(primary, patterned(16 * kib, 2), 1).empty());
  BOOST_TEST(store.keep(some_object(3), patterned(32 * kib, 3), 1).empty());
  BOOST_TEST(!store.find(primary)->in_memory());
  BOOST_TEST(store.find(secondary)->in_memory());
}

BOOST_AUTO_TEST_CASE(the_least_recently_read_spills_first) {
  temp_dir dir;
  auto store = heap_store(dir, 48 * kib);
  auto older = some_object(1);
  auto newer = some_object(2);
  BOOST_TEST(store.keep(older, patterned(16 * kib, 1), 1).empty());
  BOOST_TEST(store.keep(newer, patterned(16 * kib, 2), 1).empty());
  BOOST_TEST(read_all(store, older) == text_of(patterned(16 * kib, 1)));
  BOOST_TEST(store.keep(some_object(3), patterned(32 * kib, 3), 1).empty());
  BOOST_TEST(store.find(older)->in_memory());
  BOOST_TEST(!store.find(newer)->in_memory());
}

BOOST_AUTO_TEST_CASE(a_value_larger_than_the_store_goes_to_disk_itself) {
  temp_dir dir;
  auto store = heap_store(dir, 16 * kib);
  auto small = some_object(1);
  auto large = some_object(2);
  BOOST_TEST(store.keep(small, patterned(8 * kib, 1), 1).empty());
  BOOST_TEST(store.keep(large, patterned(64 * kib, 2), 1).empty());
  BOOST_TEST(!store.find(large)->in_memory());
  BOOST_TEST(store.find(small)->in_memory());
  BOOST_TEST(read_all(store, large) == text_of(patterned(64 * kib, 2)));
  BOOST_TEST(store.bytes_in_memory() <= 16 * kib);
}

BOOST_AUTO_TEST_CASE(a_full_disk_refuses_the_value_and_keeps_the_rest) {
  temp_dir dir;
  auto store = heap_store(dir, 32 * kib);
  auto first = some_object(1);
  BOOST_TEST(store.keep(first, patterned(32 * kib, 1), 1).empty());
  fs::remove_all(dir.path); // Spilling fails from now on.
  auto why = store.keep(some_object(2), patterned(32 * kib, 2), 1);
  BOOST_TEST(!why.empty());
  BOOST_TEST(store.size() == 1u);
  BOOST_TEST(read_all(store, first) == text_of(patterned(32 * kib, 1)));
  BOOST_TEST(store.totals().spill_failures >= 1u);
  BOOST_TEST(!store.last_spill_error().empty());
}

BOOST_AUTO_TEST_CASE(a_pinned_object_is_never_spilled) {
  temp_dir dir;
  auto arena = prism::internal::object_arena::create(
      64 * kib, prism::unique_id::random());
  auto store = arena_store(dir, arena);
  auto read = some_object(1);
  auto idle = some_object(2);
  BOOST_TEST(store.keep(read, patterned(24 * kib, 1), 1).empty());
  BOOST_TEST(store.keep(idle, patterned(24 * kib, 2), 1).empty());
  auto bytes = store.in_arena(read);
  BOOST_TEST_REQUIRE(!bytes.empty());
  store.pin(bytes.data());
  // The older one is read: the newer one makes room.
  BOOST_TEST(store.keep(some_object(3), patterned(24 * kib, 3), 1).empty());
  BOOST_TEST(store.find(read)->in_memory());
  BOOST_TEST(!store.find(idle)->in_memory());
  store.unpin(bytes.data());
}

BOOST_AUTO_TEST_CASE(a_spilled_object_is_read_back_into_the_arena) {
  temp_dir dir;
  auto arena = prism::internal::object_arena::create(
      64 * kib, prism::unique_id::random());
  auto store = arena_store(dir, arena);
  auto first = some_object(1);
  BOOST_TEST(store.keep(first, patterned(40 * kib, 1), 1).empty());
  BOOST_TEST(store.keep(some_object(2), patterned(40 * kib, 2), 1).empty());
  BOOST_TEST_REQUIRE(!store.find(first)->in_memory());
  auto bytes = store.in_arena(first);
  BOOST_TEST_REQUIRE(!bytes.empty());
  BOOST_TEST(arena->holds(bytes.data()));
  BOOST_TEST(text_of(bytes) == text_of(patterned(40 * kib, 1)));
  BOOST_TEST(store.totals().restored_objects == 1u);
  // The other one made room, and its file stays for the first one's copy.
  BOOST_TEST(store.spilled_now() == 1u);
  BOOST_TEST(arena->used() <= 64 * kib);
}

BOOST_AUTO_TEST_CASE(a_store_without_a_spill_directory_refuses_past_its_bound) {
  node_object_store::settings s;
  s.capacity = 16 * kib;
  node_object_store store{s};
  BOOST_TEST(store.keep(some_object(1), patterned(16 * kib, 1), 1).empty());
  auto why = store.keep(some_object(2), patterned(1 * kib, 2), 1);
  BOOST_TEST(why.find("no spill directory") != std::string::npos);
  BOOST_TEST(store.size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace spilling_test
