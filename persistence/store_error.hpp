#pragma once

#include <cstdint>
#include <string>

#include <prism/error.hpp>

namespace prism::persistence {

/// A failure of the control store's storage. `kind()` says what a caller can
/// do about it; `code()` is always `errc::internal`, or
/// `errc::invalid_argument` for a malformed call.
class store_error : public error {
public:
  /// What went wrong, as a decision for the caller.
  enum class kind_t : std::uint8_t {
    /// Reading or writing the disk failed. A write that failed this way is
    /// not acknowledged; the store refuses further writes until reopened.
    io,
    /// The store's files are damaged. Nothing was changed; an operator must
    /// restore the store or move it aside.
    corrupt,
    /// The store was written with a schema version this build does not read.
    /// Nothing was changed.
    wrong_schema_version,
    /// There is no store at the path and `create_if_missing` is false.
    not_found,
    /// The call itself is malformed (e.g. an empty path). Not retryable.
    invalid_argument,
  };

  store_error(kind_t kind, const std::string& message);

  /// A `corrupt` store whose damage is at `offset` in `file` (a name within
  /// the store's directory).
  store_error(const std::string& message, std::string file,
              std::uint64_t offset);

  /// The kind of failure.
  kind_t kind() const noexcept {
    return kind_;
  }

  /// The damaged file's name, if the damage is in one known file; else
  /// empty.
  const std::string& file() const noexcept {
    return file_;
  }

  /// The byte offset of the damage in `file()`.
  std::uint64_t offset() const noexcept {
    return offset_;
  }

private:
  kind_t kind_;
  std::string file_;
  std::uint64_t offset_ = 0;
};

/// Returns a short, stable name for `kind`, e.g. "wrong_schema_version".
const char* to_string(store_error::kind_t kind) noexcept;

} // namespace prism::persistence
