#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include <caf/actor_control_block.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/load_callback.hpp>
#include <caf/meta/save_callback.hpp>
#include <caf/none.hpp>
#include <caf/sec.hpp>

#include "prism/error.hpp"
#include "prism/ids.hpp"

namespace prism::detail {

/// Bytes of one serialized value, as a process makes them.
using byte_buffer = std::vector<char>;

/// The bytes of one serialized value, immutable once made, so that one copy
/// can be shared by every reader in a process: a buffer of their own, or a
/// window onto memory something else keeps alive (a node store's arena,
/// mapped into the readers on its node). Copying shares the bytes.
class shared_bytes {
public:
  shared_bytes() noexcept = default;

  /// Bytes of their own.
  shared_bytes(std::shared_ptr<const byte_buffer> buf) noexcept
      : data_(buf ? buf->data() : nullptr), size_(buf ? buf->size() : 0),
        keeper_(std::move(buf)) {}

  shared_bytes(std::shared_ptr<byte_buffer> buf) noexcept
      : shared_bytes(std::shared_ptr<const byte_buffer>{std::move(buf)}) {}

  /// The `n` bytes at `data`, alive while `keeper` is.
  shared_bytes(std::shared_ptr<const void> keeper, const char* data,
               std::size_t n) noexcept
      : data_(data), size_(n), keeper_(std::move(keeper)) {}

  const char* data() const noexcept {
    return data_;
  }

  std::size_t size() const noexcept {
    return size_;
  }

  bool empty() const noexcept {
    return size_ == 0;
  }

  const char* begin() const noexcept {
    return data_;
  }

  const char* end() const noexcept {
    return data_ + size_;
  }

  /// Whether it names any bytes (perhaps none of them).
  explicit operator bool() const noexcept {
    return keeper_ != nullptr;
  }

  /// The `n` bytes at `offset` of these, sharing what keeps them alive.
  shared_bytes slice(std::size_t offset, std::size_t n) const noexcept {
    return shared_bytes{keeper_, data_ + offset, n};
  }

  friend bool operator==(const shared_bytes& x,
                         const shared_bytes& y) noexcept {
    return x.size_ == y.size_ && (x.size_ == 0 || x.data_ == y.data_ ||
                                  std::equal(x.begin(), x.end(), y.begin()));
  }

private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  std::shared_ptr<const void> keeper_;
};

/// A stable tag for a C++ type, and the name behind it for error messages.
/// Tags are equal across processes running the same binary.
std::uint64_t register_type_tag(const std::type_info& type);

/// Returns the demangled name of the type behind `tag`, or "<unknown type>".
std::string type_tag_name(std::uint64_t tag);

/// Returns the demangled name of `type`, e.g. "std::out_of_range".
std::string demangled_name(const std::type_info& type);

/// The tag of `void` results.
inline constexpr std::uint64_t void_tag = 0;

template <class T>
std::uint64_t type_tag() {
  if constexpr (std::is_void_v<T>) {
    return void_tag;
  } else {
    static const std::uint64_t tag = register_type_tag(typeid(T));
    return tag;
  }
}

/// Where the owner of an object can be reached from any process: its owner
/// actor. A ref carries it, so a process that receives a ref needs no
/// lookup to reach the owner. Inside Prism's messages its reader makes a
/// handle of it (a proxy, for another process). Bytes written without an
/// actor system (a value's own bytes, a record in the control store) keep
/// only the actor's id and node: an owner in the reading process is found
/// again by id, one elsewhere is unreachable. Weak: an address keeps no
/// owner alive.
struct owner_address {
  /// The owner actor, once a handle was made.
  caf::weak_actor_ptr actor;
  /// Its id and node; 0 for no address (a ref made up, or read from bytes
  /// without its value).
  caf::actor_id aid = 0;
  caf::node_id nid;
  /// Where its process takes connections, "HOST:PORT"; empty if unknown
  /// (a process without a middleman).
  std::string contact;

  /// The owner actor, or nullptr if no handle was made or it is gone.
  caf::strong_actor_ptr lock() const noexcept {
    return actor.lock();
  }

  /// Whether it names an owner (that may be gone since).
  explicit operator bool() const noexcept {
    return aid != 0;
  }

  friend bool operator==(const owner_address& x,
                         const owner_address& y) noexcept {
    return x.aid == y.aid && x.nid == y.nid;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, owner_address& x) {
  auto* ctx = caf::context_of(&f);
  auto load = [&]() -> caf::error {
    x.actor.reset();
    if (x.aid == 0 || ctx == nullptr)
      return caf::none;
    caf::strong_actor_ptr strong;
    if (auto err = caf::load_actor(strong, ctx, x.aid, x.nid))
      return err;
    x.actor.reset(strong.get());
    return caf::none;
  };
  auto save = [&]() -> caf::error {
    // A local actor is registered, so that messages to it from other
    // processes find it.
    auto strong = x.actor.lock();
    if (!strong || ctx == nullptr)
      return caf::none;
    return caf::save_actor(strong, ctx, x.aid, x.nid);
  };
  return f(x.aid, x.nid, x.contact, caf::meta::load_callback(load),
           caf::meta::save_callback(save));
}

/// An object ref written inside a value: the object, the worker that owns
/// it, and where that owner is.
struct contained_ref {
  object_id id;
  worker_id owner;
  owner_address address;

  friend bool operator==(const contained_ref&, const contained_ref&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, contained_ref& x) {
  return f(x.id, static_cast<unique_id&>(x.owner), x.address);
}

/// Buffers this large or larger are put in huge pages (`reserve_large`).
inline constexpr std::size_t large_buffer_bytes = std::size_t{4} << 20;

/// Asks the kernel to back the whole 2 MB pages within `n` bytes at `p`
/// with huge pages (transparent huge pages, which Debian's kernels give on
/// request): writing a fresh large buffer then faults once per 2 MB, not
/// once per 4 KB page, and a page fault is most of what it costs.
void advise_huge_pages(void* p, std::size_t n) noexcept;

/// Reserves room for `n` bytes (or chars) in `buf`, a vector or string,
/// in huge pages if that is `large_buffer_bytes` or more; does nothing for
/// less.
template <class Buffer>
void reserve_large(Buffer& buf, std::size_t n) {
  if (n < large_buffer_bytes)
    return;
  buf.reserve(n);
  advise_huge_pages(buf.data(), buf.capacity());
}

/// Buffers this large or larger are faulted in by two threads at once
/// (`tail_prefault`).
inline constexpr std::size_t parallel_fault_bytes = std::size_t{16} << 20;

/// While it lives, faults in all but the first eighth of the `n` fresh
/// bytes at `p` on a thread of its own, as the caller writes them from the
/// front; for less than `parallel_fault_bytes` it does nothing. Writing a
/// fresh large buffer costs about as much in page faults (the kernel
/// zeroing each fresh page) as in the copy itself: with the faults ahead of
/// it taken on another core, the writer pays for the copy and an eighth of
/// the faults, and never catches up with that core (which faults about as
/// fast as the writer copies). The bytes are left as they are; the
/// destructor waits for the thread.
class tail_prefault {
public:
  tail_prefault(void* p, std::size_t n);
  ~tail_prefault();

  tail_prefault(const tail_prefault&) = delete;
  tail_prefault& operator=(const tail_prefault&) = delete;

private:
  std::thread worker_;
};

/// A serialized value together with the tag of the type it was written as.
struct value {
  std::uint64_t tag = void_tag;
  shared_bytes bytes;
  /// The object refs written into `bytes`, each once. Whoever keeps the
  /// value keeps these objects alive: a store holding it counts them as
  /// contained, and a process that decodes it becomes their borrower.
  std::vector<contained_ref> refs;

  /// Number of payload bytes.
  std::size_t size() const noexcept {
    return bytes.size();
  }

  friend bool operator==(const value& x, const value& y) {
    return x.tag == y.tag && x.bytes == y.bytes;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, value& x) {
  if constexpr (std::is_base_of_v<caf::serializer, Inspector>) {
    // Written as CAF writes a byte vector, from wherever the bytes are.
    auto n = x.bytes.size();
    return caf::error::eval(
        [&] { return f(x.tag); }, [&] { return f.begin_sequence(n); },
        [&] {
          return n > 0 ? f.apply_raw(n, const_cast<char*>(x.bytes.data()))
                       : caf::error{};
        },
        [&] { return f.end_sequence(); }, [&] { return f(x.refs); });
  } else if constexpr (Inspector::reads_state) {
    // Rendered (logs): the tag and size, not the bytes.
    return f(x.tag, x.size(), x.refs);
  } else if constexpr (Inspector::writes_state) {
    // Read as CAF reads a byte vector, into room made first (see
    // `reserve_large`); a length past the bytes left is refused before
    // anything is allocated for it.
    auto buf = std::make_shared<byte_buffer>();
    std::size_t n = 0;
    auto result = caf::error::eval(
        [&] { return f(x.tag); }, [&] { return f.begin_sequence(n); },
        [&] {
          if constexpr (std::is_base_of_v<caf::deserializer, Inspector>) {
            // CAF hands its binary deserializer over as the base class.
            if (auto* bytes = dynamic_cast<caf::binary_deserializer*>(&f)) {
              if (n > bytes->remaining())
                return caf::make_error(caf::sec::end_of_stream);
              // Copied once from where they lie, not into zeros first.
              reserve_large(*buf, n);
              auto from =
                  reinterpret_cast<const char*>(bytes->remainder().data());
              buf->assign(from, from + n);
              bytes->skip(n);
              return caf::error{};
            }
          }
          reserve_large(*buf, n);
          buf->resize(n);
          return n > 0 ? f.apply_raw(n, buf->data()) : caf::error{};
        },
        [&] { return f.end_sequence(); }, [&] { return f(x.refs); });
    x.bytes = std::move(buf);
    return result;
  } else {
    return f(x.tag, x.size());
  }
}

[[noreturn]] void throw_serialization_failure(const std::string& what,
                                              std::uint64_t tag);

[[noreturn]] void throw_type_mismatch(std::uint64_t expected,
                                      std::uint64_t actual,
                                      const std::string& where);

/// Collects the object refs written on this thread while it lives (see
/// `encode`). Scopes nest: an inner one hides the outer one.
class ref_capture {
public:
  ref_capture() noexcept;
  ~ref_capture();

  ref_capture(const ref_capture&) = delete;
  ref_capture& operator=(const ref_capture&) = delete;

  /// Notes a ref being written (called by `object_ref`'s `inspect`).
  static void note(const object_id& id, const worker_id& owner,
                   const owner_address& address);

  /// The refs written, each once. The calling thread's runtime takes a
  /// local reference on each: the value keeps them alive until whoever
  /// receives it holds them another way and releases these references.
  std::vector<contained_ref> finish();

private:
  ref_capture* outer_;
  std::vector<contained_ref> refs_;
};

/// Names, while it lives, the refs of the value being decoded on this
/// thread, so that a ref read from its bytes finds its owner's address
/// (see `decode`). Scopes nest: an inner one hides the outer one.
class ref_source {
public:
  explicit ref_source(const std::vector<contained_ref>& refs) noexcept;
  ~ref_source();

  ref_source(const ref_source&) = delete;
  ref_source& operator=(const ref_source&) = delete;

  /// The address the value being decoded lists for `id`'s owner; empty if
  /// it lists none (or nothing is being decoded).
  static owner_address address_of(const object_id& id);

private:
  const ref_source* outer_;
  const std::vector<contained_ref>& refs_;
};

/// Serializes `x` through its `inspect()` overload. The refs written into
/// it are listed in the value, each held once by the calling thread's
/// runtime (see `ref_capture::finish`).
template <class T>
value encode(const T& x) {
  auto buf = std::make_shared<byte_buffer>();
  if constexpr (std::is_same_v<T, std::string>)
    reserve_large(*buf, x.size() + sizeof(std::uint64_t));
  ref_capture capture;
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), *buf};
  if (auto err = sink(const_cast<T&>(x)))
    throw_serialization_failure("cannot serialize", type_tag<T>());
  return value{type_tag<T>(), std::move(buf), capture.finish()};
}

/// Deserializes a `T` from `v`. Throws `type_mismatch_error` if `v` holds
/// another type, and `error(errc::internal)` if the bytes are malformed.
template <class T>
T decode(const value& v, const char* where = "value") {
  if (v.tag != type_tag<T>())
    throw_type_mismatch(type_tag<T>(), v.tag, where);
  T result{};
  ref_source source{v.refs};
  caf::binary_deserializer src{static_cast<caf::execution_unit*>(nullptr),
                               v.bytes.data(), v.bytes.size()};
  if constexpr (std::is_same_v<T, std::string>) {
    // As CAF reads a string, into room made first (see `reserve_large`).
    std::size_t n = 0;
    if (src.begin_sequence(n) || n > src.remaining())
      throw_serialization_failure("cannot deserialize", v.tag);
    reserve_large(result, n);
    tail_prefault faults{result.data(), result.capacity()};
    result.assign(reinterpret_cast<const char*>(src.remainder().data()), n);
    src.skip(n);
    if (src.end_sequence())
      throw_serialization_failure("cannot deserialize", v.tag);
  } else if (auto err = src(result)) {
    throw_serialization_failure("cannot deserialize", v.tag);
  }
  if (src.remaining() != 0)
    throw_serialization_failure("trailing bytes after", v.tag);
  return result;
}

} // namespace prism::detail
