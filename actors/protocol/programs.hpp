#pragma once

// Programs kept by the control store: a driver hands its executable's bytes
// over once, by SHA-256; a node that does not hold that program at its
// path on its own host reads it from there, checks it and runs it.

#include <cstdint>
#include <string>

namespace prism::protocol {

/// driver -> gcs: the driver can hand over the program with SHA-256
/// `sha256` (lower-case hex) of `size` bytes. Answered with true if the
/// control store wants it (then `program_part`s follow from offset 0),
/// false if it keeps it already or another driver is handing it over.
struct offer_program {
  std::string sha256;
  std::uint64_t size = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, offer_program& x) {
  return f(x.sha256, x.size);
}

/// driver -> gcs: the bytes of an offered program from `offset` on, in
/// order. Answered with true once the whole program is kept (checked against
/// its SHA-256 and on disk), false while more is expected; an error if the
/// part does not fit (no such offer, another offset, more bytes than
/// offered, or the bytes do not hash to the program's SHA-256).
struct program_part {
  std::string sha256;
  std::uint64_t offset = 0;
  std::string bytes;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, program_part& x) {
  return f(x.sha256, x.offset, x.bytes);
}

/// raylet -> gcs: at most `max_bytes` (not 0) of the program with SHA-256
/// `sha256`, from `offset` on. Answered with `program_bytes`.
struct read_program {
  std::string sha256;
  std::uint64_t offset = 0;
  std::uint64_t max_bytes = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, read_program& x) {
  return f(x.sha256, x.offset, x.max_bytes);
}

/// gcs -> raylet: a part of a kept program.
struct program_bytes {
  /// Whether `bytes` holds a part of the program.
  bool ok = false;
  /// Not kept yet, but a driver is handing it over: ask again later.
  bool pending = false;
  /// Neither kept nor being handed over. A driver's offer can trail the
  /// first read of its program (its first task reaches a node first).
  bool unknown = false;
  /// Why not, unless `ok` or `pending`.
  std::string error;
  /// The program's size.
  std::uint64_t total = 0;
  std::uint64_t offset = 0;
  std::string bytes;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, program_bytes& x) {
  return f(x.ok, x.pending, x.unknown, x.error, x.total, x.offset, x.bytes);
}

} // namespace prism::protocol
