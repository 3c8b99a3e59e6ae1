#include "gcs/program_store.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <utility>

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "common/program_file.hpp"
#include "prism/error.hpp"
#include "protocol/programs.hpp"

namespace prism::actors {

namespace {

using clock_type = std::chrono::steady_clock;

/// A program being handed over.
struct upload {
  /// Its file, beside its final name until it is whole and checked.
  program_file_writer file;
  std::uint64_t size = 0;
  /// Bytes written so far: the offset of the next part.
  std::uint64_t offset = 0;
  clock_type::time_point last_part;
};

struct program_store_state {
  std::string dir;
  std::shared_ptr<spdlog::logger> log;
  /// Dropping an upload removes what it wrote.
  std::unordered_map<std::string, upload> uploads;

  std::string path_of(const std::string& sha256) const {
    return dir + "/" + sha256;
  }

  /// The upload of `sha256` if one is under way and not abandoned.
  upload* live_upload(const std::string& sha256) {
    auto i = uploads.find(sha256);
    if (i == uploads.end())
      return nullptr;
    if (clock_type::now() - i->second.last_part > stale_program_upload) {
      uploads.erase(i);
      return nullptr;
    }
    return &i->second;
  }

  static inline const char* name = "prism.programs";
};

using program_store_actor = caf::stateful_actor<program_store_state>;

caf::error refuse(std::string why) {
  return caf::make_error(caf::sec::invalid_argument, std::move(why));
}

/// The size of the kept program `sha256`, if it is kept.
std::optional<std::uint64_t> kept_size(const program_store_state& st,
                                       const std::string& sha256) {
  struct stat info {};
  if (::stat(st.path_of(sha256).c_str(), &info) != 0 || !S_ISREG(info.st_mode))
    return std::nullopt;
  return static_cast<std::uint64_t>(info.st_size);
}

caf::result<bool> offer(program_store_actor* self,
                        const protocol::offer_program& msg) {
  auto& st = self->state;
  if (!is_sha256_hex(msg.sha256))
    return refuse("an offered program's SHA-256 '" + msg.sha256.substr(0, 80) +
                  "' is not 64 lower-case hex digits");
  if (msg.size == 0 || msg.size > max_program_bytes)
    return refuse("an offered program of " + std::to_string(msg.size) +
                  " bytes: the control store keeps programs of 1 byte to " +
                  std::to_string(max_program_bytes) + " bytes");
  if (auto size = kept_size(st, msg.sha256)) {
    if (*size == msg.size)
      return false;
    // Not what the name says, whatever happened to it: replaced.
    st.log->warn("the kept program {} has {} bytes, not {}; taking it again",
                 msg.sha256, *size, msg.size);
    ::unlink(st.path_of(msg.sha256).c_str());
  }
  if (st.live_upload(msg.sha256) != nullptr)
    return false;
  upload u;
  if (auto why = u.file.open(st.dir + "/." + msg.sha256 + ".partial", 0644);
      !why.empty())
    return refuse("the control store " + why);
  u.size = msg.size;
  u.last_part = clock_type::now();
  st.uploads.emplace(msg.sha256, std::move(u));
  st.log->info("taking program {} ({} bytes)", msg.sha256, msg.size);
  return true;
}

caf::result<bool> take_part(program_store_actor* self,
                            const protocol::program_part& msg) {
  auto& st = self->state;
  auto* u = st.live_upload(msg.sha256);
  if (u == nullptr)
    return refuse("a part of program '" + msg.sha256.substr(0, 80) +
                  "', which nobody is handing over");
  auto fail = [&](caf::error err) -> caf::result<bool> {
    st.log->warn("dropping the upload of program {}: {}", msg.sha256,
                 self->system().render(err));
    st.uploads.erase(msg.sha256);
    return err;
  };
  if (msg.offset != u->offset)
    return fail(refuse("a part of program " + msg.sha256 + " at offset " +
                       std::to_string(msg.offset) + ", expected " +
                       std::to_string(u->offset)));
  if (msg.bytes.empty() || msg.bytes.size() > max_program_part_bytes ||
      msg.bytes.size() > u->size - u->offset)
    return fail(refuse("a part of program " + msg.sha256 + " of " +
                       std::to_string(msg.bytes.size()) + " bytes at offset " +
                       std::to_string(msg.offset) + " of " +
                       std::to_string(u->size)));
  if (auto why = u->file.append(msg.bytes.data(), msg.bytes.size());
      !why.empty())
    return fail(refuse("the control store " + why));
  u->offset += msg.bytes.size();
  u->last_part = clock_type::now();
  if (u->offset < u->size)
    return false;
  // Checked, on disk with its directory, renamed into place.
  if (auto why = u->file.commit(msg.sha256, st.path_of(msg.sha256), 0644,
                                /*sync=*/true);
      !why.empty())
    return fail(refuse("program " + msg.sha256 + " is not kept: " + why));
  st.log->info("keeps program {} ({} bytes)", msg.sha256, u->size);
  st.uploads.erase(msg.sha256);
  return true;
}

protocol::program_bytes read(program_store_actor* self,
                             const protocol::read_program& msg) {
  auto& st = self->state;
  protocol::program_bytes out;
  out.offset = msg.offset;
  if (!is_sha256_hex(msg.sha256)) {
    out.error = "'" + msg.sha256.substr(0, 80) +
                "' is not a SHA-256 (64 lower-case hex digits)";
    return out;
  }
  if (msg.max_bytes == 0) {
    out.error = "a read of 0 bytes";
    return out;
  }
  int fd = ::open(st.path_of(msg.sha256).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (auto* u = st.live_upload(msg.sha256)) {
      out.pending = true;
      out.total = u->size;
      return out;
    }
    out.unknown = true;
    out.error = "the control store keeps no program " + msg.sha256 +
                " (its driver has not handed it over, or not all of it)";
    return out;
  }
  struct stat info {};
  ::fstat(fd, &info);
  out.total = static_cast<std::uint64_t>(info.st_size);
  if (msg.offset > out.total) {
    ::close(fd);
    out.error = "a read at offset " + std::to_string(msg.offset) +
                " of program " + msg.sha256 + ", which has " +
                std::to_string(out.total) + " bytes";
    return out;
  }
  auto n =
      std::min({msg.max_bytes, max_program_part_bytes, out.total - msg.offset});
  out.bytes.resize(n);
  auto done = read_at(fd, out.bytes.data(), n, msg.offset);
  ::close(fd);
  if (done < n) {
    out.bytes.clear();
    out.error = "cannot read program " + msg.sha256 +
                " from the control "
                "store's disk";
    return out;
  }
  out.ok = true;
  return out;
}

caf::behavior program_store(program_store_actor* self, std::string dir) {
  auto& st = self->state;
  st.dir = std::move(dir);
  st.log = component_logger("gcs");
  install_default_handlers(self, st.log);
  return {
      [self](const protocol::offer_program& msg) { return offer(self, msg); },
      [self](const protocol::program_part& msg) {
        return take_part(self, msg);
      },
      [self](const protocol::read_program& msg) { return read(self, msg); },
  };
}

} // namespace

caf::actor spawn_program_store(caf::actor_system& sys, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw invalid_argument_error("cannot create the directory of the control "
                                 "store's programs, " +
                                 dir + ": " + ec.message());
  // What an earlier head left half written.
  for (const auto& e : std::filesystem::directory_iterator{dir, ec}) {
    auto name = e.path().filename().string();
    if (name.size() > 8 && name.front() == '.' && name.ends_with(".partial"))
      std::filesystem::remove(e.path(), ec);
  }
  return sys.spawn<caf::detached>(program_store, dir);
}

} // namespace prism::actors
