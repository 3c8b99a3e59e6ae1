// What a job's worker processes run: the program of its driver, which the
// control store names by path and SHA-256. A node runs the file at that path
// on its host if it holds those bytes; otherwise the copy in its program
// cache, named by the SHA-256, fetched from the control store (which the
// driver handed the program to) if it is not there yet, and checked before
// it is kept.

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <utility>

#include "common/default_handlers.hpp"
#include "common/program_file.hpp"
#include "protocol/programs.hpp"
#include "raylet/raylet_state.hpp"

namespace prism::actors::raylet_internal {

namespace {

/// How long the control store may take to name a job's program, or to
/// answer a read of it.
constexpr auto program_timeout = std::chrono::seconds{30};

/// How long a node waits for a program that a driver is still handing to
/// the control store.
constexpr auto program_upload_wait = std::chrono::seconds{300};

/// How long a node asks again for a program that the control store does
/// not know: the driver's offer of it may trail its first task.
constexpr auto program_offer_wait = std::chrono::seconds{10};

/// How often it asks again meanwhile.
constexpr auto program_upload_poll = std::chrono::milliseconds{200};

/// The bytes of one read of a program.
constexpr std::uint64_t program_read_bytes = std::uint64_t{4} << 20;

// -- fetching a program from the control store --------------------------------

using fetch_more_atom = caf::atom_constant<caf::atom("fetchmore")>;

struct fetch_state {
  caf::actor raylet;
  caf::actor gcs;
  job_id job;
  protocol::job_program program;
  /// Why the file at the program's path did not do.
  std::string local_error;
  /// The cached copy, and its file while it is fetched.
  std::string cached;
  program_file_writer file;
  std::uint64_t offset = 0;
  std::chrono::steady_clock::time_point give_up_at;
  /// Until when a program the control store does not know is asked again.
  std::chrono::steady_clock::time_point offer_due;

  static inline const char* name = "prism.program_fetch";
};

using fetch_actor = caf::stateful_actor<fetch_state>;

// Reports the program to run (`path`), or why none, and ends.
void fetched(fetch_actor* self, const std::string& path, std::string error) {
  auto& st = self->state;
  auto program = st.program;
  if (error.empty())
    program.path = path;
  else
    error = st.local_error +
            "; and it cannot be fetched from the control "
            "store: " +
            error;
  self->send(st.raylet,
             protocol::program_checked{st.job, program, std::move(error)});
  self->quit();
}

/// A directory of this user's alone, created if missing: nobody else can
/// put a file in it between the check of a program and its start.
std::string own_directory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return "cannot create " + dir + ": " + ec.message();
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0)
    return "cannot use " + dir + ": " + std::strerror(errno);
  if (info.st_uid != ::geteuid())
    return dir + " belongs to another user";
  if ((info.st_mode & 0077) != 0 && ::chmod(dir.c_str(), 0700) != 0)
    return "cannot make " + dir + " private: " + std::strerror(errno);
  return {};
}

// Keeps the complete copy: checked against the SHA-256 (taken while it was
// written), renamed into place. Not synced to disk: a copy cut short by a
// crash of the machine fails its check the next time and is fetched again.
void keep_copy(fetch_actor* self) {
  auto& st = self->state;
  if (auto why = st.file.commit(st.program.sha256, st.cached, 0755,
                                /*sync=*/false);
      !why.empty()) {
    fetched(self, {}, std::move(why));
    return;
  }
  remember_program_file(st.cached, st.program.sha256);
  fetched(self, st.cached, {});
}

void read_more(fetch_actor* self) {
  auto& st = self->state;
  self->request(st.gcs, program_timeout,
                protocol::read_program{st.program.sha256, st.offset,
                                       program_read_bytes})
      .then(
          [self](protocol::program_bytes& got) {
            auto& st = self->state;
            auto now = std::chrono::steady_clock::now();
            if (got.unknown && st.offset == 0 && now < st.offer_due) {
              self->delayed_send(self, program_upload_poll,
                                 fetch_more_atom::value);
              return;
            }
            if (got.pending) {
              if (now >= st.give_up_at) {
                fetched(self, {}, "its driver is still handing it over");
                return;
              }
              self->delayed_send(self, program_upload_poll,
                                 fetch_more_atom::value);
              return;
            }
            if (!got.ok) {
              fetched(self, {}, std::move(got.error));
              return;
            }
            if (got.total != st.program.size || got.offset != st.offset ||
                got.bytes.empty() ||
                got.bytes.size() > st.program.size - st.offset) {
              fetched(self, {},
                      "the control store answered a read at offset " +
                          std::to_string(st.offset) + " with " +
                          std::to_string(got.bytes.size()) +
                          " bytes at offset " + std::to_string(got.offset) +
                          " of " + std::to_string(got.total));
              return;
            }
            if (auto why = st.file.append(got.bytes.data(), got.bytes.size());
                !why.empty()) {
              fetched(self, {}, std::move(why));
              return;
            }
            st.offset += got.bytes.size();
            if (st.offset == st.program.size)
              keep_copy(self);
            else
              read_more(self);
          },
          [self](caf::error& err) {
            fetched(self, {}, self->system().render(err));
          });
}

// Fetches the program into the node's cache, where the check found no copy.
void fetch(fetch_actor* self, const std::string& cache) {
  auto& st = self->state;
  if (!is_sha256_hex(st.program.sha256)) {
    fetched(self, {}, "its SHA-256 '" + st.program.sha256 + "' is not one");
    return;
  }
  if (auto why = own_directory(cache); !why.empty()) {
    fetched(self, {}, "the node's program cache: " + why);
    return;
  }
  st.cached = cache + "/" + st.program.sha256;
  auto partial = cache + "/." + st.program.sha256 + "." +
                 std::to_string(::getpid()) + "." +
                 std::to_string(st.job.value) + ".partial";
  if (auto why = st.file.open(std::move(partial), 0600); !why.empty()) {
    fetched(self, {}, std::move(why));
    return;
  }
  st.give_up_at = std::chrono::steady_clock::now() + program_upload_wait;
  st.offer_due = std::chrono::steady_clock::now() + program_offer_wait;
  component_logger("raylet")->info(
      "fetching program {} ({} bytes) of job {} from the control store: {}",
      st.program.sha256, st.program.size, st.job.value, st.local_error);
  read_more(self);
}

caf::behavior program_fetch(fetch_actor* self, caf::actor raylet,
                            caf::actor gcs, job_id job,
                            protocol::job_program program,
                            std::string local_error, std::string cache) {
  auto& st = self->state;
  install_default_handlers(self, component_logger("raylet"));
  st.raylet = std::move(raylet);
  st.gcs = std::move(gcs);
  st.job = job;
  st.program = std::move(program);
  st.local_error = std::move(local_error);
  // Ends with its node.
  self->monitor(st.raylet);
  set_checked_down_handler(self, [self](caf::down_msg&) { self->quit(); });
  self->send(self, fetch_more_atom::value, std::move(cache));
  return {
      [self](fetch_more_atom, const std::string& cache) { fetch(self, cache); },
      [self](fetch_more_atom) { read_more(self); },
  };
}

// Checks `program` on this host, off the scheduler's threads (reading a
// large file takes a while): the file at its path, else the copy in the
// node's program cache. Reports to the raylet.
void check_off_thread(raylet_actor* self, job_id job,
                      protocol::job_program program) {
  std::thread{[raylet = self->address(), job, program = std::move(program),
               cache = self->state.cfg.program_cache]() mutable {
    auto error = check_program_file(program.path, program.sha256, program.size);
    if (!error.empty() && !cache.empty() && is_sha256_hex(program.sha256) &&
        own_directory(cache).empty()) {
      auto cached = cache + "/" + program.sha256;
      if (check_program_file(cached, program.sha256, program.size).empty()) {
        program.path = std::move(cached);
        error.clear();
      }
    }
    if (auto r = caf::actor_cast<caf::actor>(raylet))
      caf::anon_send(r, protocol::program_checked{job, program, error});
  }}.detach();
}

void look_up(raylet_actor* self, job_id job) {
  auto& st = self->state;
  self->request(st.cfg.gcs, program_timeout, protocol::get_job_program{job})
      .then(
          [self, job](protocol::job_program& program) {
            if (program.path.empty() || program.sha256.empty()) {
              self->send(self,
                         protocol::program_checked{
                             job, program,
                             "the control store knows no program of job " +
                                 std::to_string(job.value) +
                                 " (its driver registered none)"});
              return;
            }
            check_off_thread(self, job, std::move(program));
          },
          [self, job](caf::error& err) {
            self->send(self, protocol::program_checked{
                                 job,
                                 {},
                                 "cannot ask the control store for the "
                                 "program of job " +
                                     std::to_string(job.value) + ": " +
                                     self->system().render(err)});
          });
}

} // namespace

const worker_program* program_of(raylet_actor* self, job_id job) {
  auto& st = self->state;
  if (!st.cfg.program.empty())
    return &st.cfg.program;
  if (auto i = st.programs.find(job); i != st.programs.end())
    return &i->second;
  if (st.programs_pending.insert(job).second)
    look_up(self, job);
  return nullptr;
}

void program_checked(raylet_actor* self, protocol::program_checked& msg) {
  auto& st = self->state;
  bool fetching = st.programs_fetching.erase(msg.job) > 0;
  if (!msg.error.empty() && !fetching && !msg.program.sha256.empty() &&
      !st.cfg.program_cache.empty()) {
    // Neither at the driver's path nor in the cache: from the control
    // store. Its writes go to the page cache, short enough for a scheduler
    // thread; the long reads (checks of whole files) are on the checking
    // thread. Not on a thread of its own: CAF 0.17 waits at shutdown for
    // every detached actor to be destroyed, and one held by a timer past the
    // scheduler's stop hangs it.
    st.programs_fetching.insert(msg.job);
    self->spawn(program_fetch, caf::actor{self}, st.cfg.gcs, msg.job,
                std::move(msg.program), std::move(msg.error),
                st.cfg.program_cache);
    return;
  }
  st.programs_pending.erase(msg.job);
  if (!msg.error.empty()) {
    refuse_job(self, msg.job, errc::function_not_found,
               "worker processes of job " + std::to_string(msg.job.value) +
                   " cannot start on node " + st.cfg.node.hex() + ": " +
                   msg.error);
    return;
  }
  st.log->info("job {} runs {} ({} bytes, SHA-256 {})", msg.job.value,
               msg.program.path, msg.program.size, msg.program.sha256);
  st.programs[msg.job] =
      worker_program{std::move(msg.program.path), std::move(msg.program.argv),
                     std::move(msg.program.sha256)};
  start_queued_hosts(self);
  schedule(self);
}

void forget_program_if_unused(raylet_actor* self, job_id job) {
  auto& st = self->state;
  auto i = st.programs.find(job);
  if (i == st.programs.end() || !st.cfg.launcher)
    return;
  for (auto& [other, program] : st.programs)
    if (other != job && !st.finished_jobs.contains(other) &&
        program == i->second)
      return;
  st.cfg.launcher->forget(i->second);
}

} // namespace prism::actors::raylet_internal
