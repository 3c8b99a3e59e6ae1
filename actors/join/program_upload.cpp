#include "join/program_upload.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "common/program_file.hpp"
#include "protocol/programs.hpp"

namespace prism::actors {

namespace {

/// The bytes of one part: a read of it from the page cache is short enough
/// for a scheduler thread.
constexpr std::uint64_t part_bytes = std::uint64_t{1} << 20;

/// How long the control store may take to answer an offer: long enough for
/// a head that restarts (messages wait at the endpoint meanwhile).
constexpr auto offer_timeout = std::chrono::seconds{60};

/// How long it may take to answer a part, which takes it milliseconds: a
/// part sent to a head that died is never answered, and the upload starts
/// again once this passed.
constexpr auto part_timeout = std::chrono::seconds{10};

/// How often an upload that failed part way starts again from its offer (a
/// head that restarted meanwhile forgot the upload).
constexpr int max_upload_attempts = 3;

using offer_atom = caf::atom_constant<caf::atom("offer")>;

struct upload_state {
  protocol::job_program program;
  caf::actor gcs;
  int fd = -1;
  std::uint64_t offset = 0;
  /// Offers made so far.
  int attempts = 0;
  std::shared_ptr<spdlog::logger> log;

  ~upload_state() {
    if (fd >= 0)
      ::close(fd);
  }

  static inline const char* name = "prism.program_upload";
};

using upload_actor = caf::stateful_actor<upload_state>;

void give_up(upload_actor* self, const std::string& why) {
  self->state.log->warn("the control store keeps no copy of program {} ({}): "
                        "{}; only nodes that hold it at that path run its "
                        "tasks",
                        self->state.program.sha256, self->state.program.path,
                        why);
  self->quit();
}

void send_part(upload_actor* self) {
  auto& st = self->state;
  auto n = std::min(part_bytes, st.program.size - st.offset);
  std::string bytes(n, '\0');
  errno = 0;
  if (read_at(st.fd, bytes.data(), n, st.offset) < n) {
    give_up(self, errno != 0 ? std::string{std::strerror(errno)}
                             : std::string{"the running image is shorter "
                                           "than its digest said"});
    return;
  }
  self->request(st.gcs, part_timeout,
                protocol::program_part{st.program.sha256, st.offset,
                                       std::move(bytes)})
      .then(
          [self, n](bool kept) {
            auto& st = self->state;
            st.offset += n;
            if (kept) {
              st.log->info("the control store keeps program {} ({} bytes)",
                           st.program.sha256, st.program.size);
              self->quit();
            } else if (st.offset >= st.program.size) {
              give_up(self, "the control store took every byte but kept "
                            "nothing");
            } else {
              send_part(self);
            }
          },
          [self](caf::error& err) {
            auto& st = self->state;
            if (st.attempts >= max_upload_attempts) {
              give_up(self, self->system().render(err));
              return;
            }
            st.log->info("handing program {} over again from its start: {}",
                         st.program.sha256, self->system().render(err));
            self->send(self, offer_atom::value);
          });
}

// Offers the program; if the control store wants it, hands over the first
// part.
void offer(upload_actor* self) {
  auto& st = self->state;
  if (st.program.sha256.empty() || st.program.size == 0) {
    give_up(self, "its digest could not be taken");
    return;
  }
  ++st.attempts;
  st.offset = 0;
  self->request(st.gcs, offer_timeout,
                protocol::offer_program{st.program.sha256, st.program.size})
      .then(
          [self](bool wanted) {
            auto& st = self->state;
            if (!wanted) {
              st.log->debug("the control store has program {} already",
                            st.program.sha256);
              self->quit();
              return;
            }
            if (st.fd < 0)
              st.fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
            if (st.fd < 0) {
              give_up(self, std::string{"cannot read the running image: "} +
                                std::strerror(errno));
              return;
            }
            send_part(self);
          },
          [self](caf::error& err) {
            give_up(self, self->system().render(err));
          });
}

caf::behavior program_upload(upload_actor* self, caf::actor gcs,
                             protocol::job_program program) {
  auto& st = self->state;
  st.log = component_logger("cluster");
  install_default_handlers(self, st.log);
  st.gcs = std::move(gcs);
  st.program = std::move(program);
  self->send(self, offer_atom::value);
  return {
      [self](offer_atom) { offer(self); },
  };
}

} // namespace

caf::actor spawn_program_upload(caf::actor_system& sys, caf::actor gcs,
                                protocol::job_program program) {
  // Not on a thread of its own: CAF 0.17 waits at shutdown for every
  // detached actor to be destroyed, and one killed while a request of it
  // was on its way through the control store's endpoint was buffered past the
  // stop of the scheduler, which hung the shutdown of its actor system.
  return sys.spawn(program_upload, std::move(gcs), std::move(program));
}

} // namespace prism::actors
