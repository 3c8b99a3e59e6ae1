#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include "prism/error.hpp"
#include "prism/ids.hpp"

namespace prism::detail {

/// Bytes of one serialized value. Immutable once made, so that one copy can be
/// shared by every reader in a process.
using byte_buffer = std::vector<char>;
using shared_bytes = std::shared_ptr<const byte_buffer>;

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

/// An object ref written inside a value: the object, and the worker that
/// owns it.
struct contained_ref {
  object_id id;
  worker_id owner;

  friend bool operator==(const contained_ref&, const contained_ref&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, contained_ref& x) {
  return f(x.id, static_cast<unique_id&>(x.owner));
}

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
    return bytes ? bytes->size() : 0;
  }

  friend bool operator==(const value& x, const value& y) {
    if (x.tag != y.tag || x.size() != y.size())
      return false;
    return x.size() == 0 || *x.bytes == *y.bytes;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, value& x) {
  if constexpr (Inspector::reads_state) {
    static const byte_buffer empty;
    return f(x.tag, const_cast<byte_buffer&>(x.bytes ? *x.bytes : empty),
             x.refs);
  } else if constexpr (Inspector::writes_state) {
    auto buf = std::make_shared<byte_buffer>();
    auto result = f(x.tag, *buf, x.refs);
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
  static void note(const object_id& id, const worker_id& owner);

  /// The refs written, each once. The calling thread's runtime takes a
  /// local reference on each: the value keeps them alive until whoever
  /// receives it holds them another way and releases these references.
  std::vector<contained_ref> finish();

private:
  ref_capture* outer_;
  std::vector<contained_ref> refs_;
};

/// Serializes `x` through its `inspect()` overload. The refs written into
/// it are listed in the value, each held once by the calling thread's
/// runtime (see `ref_capture::finish`).
template <class T>
value encode(const T& x) {
  auto buf = std::make_shared<byte_buffer>();
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
  static const byte_buffer empty;
  const auto& buf = v.bytes ? *v.bytes : empty;
  caf::binary_deserializer src{static_cast<caf::execution_unit*>(nullptr), buf};
  if (auto err = src(result))
    throw_serialization_failure("cannot deserialize", v.tag);
  if (src.remaining() != 0)
    throw_serialization_failure("trailing bytes after", v.tag);
  return result;
}

} // namespace prism::detail
