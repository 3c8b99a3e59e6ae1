#include "gcs/job_launch.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/processes.hpp"
#include "common/write_fully.hpp"

namespace prism::actors {

// Named, not anonymous: in a unity build this file shares its unit with
// others, whose anonymous names would collide.
namespace job_launching {

// -- what the forked processes may call ---------------------------------------
//
// The supervisor and the driver's process before its exec are forked from
// the head, a process of many threads: until the exec (or for good, in the
// supervisor) they call only async-signal-safe functions, on memory
// prepared before the fork. No allocation, no stdio, no locks.

/// What the supervisor tells the head once the driver runs or failed to.
struct launch_report {
  pid_t supervisor = 0;
  pid_t driver = 0;
  /// 0 if the driver runs; else the step that failed (`step_*`) ...
  int step = 0;
  /// ... and its errno.
  int error = 0;
};

constexpr int step_fork = 1;
constexpr int step_chdir = 2;
constexpr int step_exec = 3;

/// The status written when the driver's end could not be learnt.
constexpr int unknown_status = -1;

/// The grace between SIGTERM and SIGKILL when the supervisor is signalled
/// without one (`prism stop`).
constexpr int default_grace_ms = 5000;

/// Appends the decimal digits of `v` at `out`; returns the end.
char* put_number(char* out, long long v) {
  char digits[24];
  int n = 0;
  bool negative = v < 0;
  unsigned long long u = negative ? 0ULL - static_cast<unsigned long long>(v)
                                  : static_cast<unsigned long long>(v);
  do {
    digits[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u > 0);
  if (negative)
    *out++ = '-';
  while (n > 0)
    *out++ = digits[--n];
  return out;
}

char* put_text(char* out, const char* text) {
  while (*text != '\0')
    *out++ = *text++;
  return out;
}

std::int64_t now_ms_raw() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

std::int64_t monotonic_ms_raw() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

/// Everything the forked processes use, made before the fork.
struct prepared {
  const char* program = nullptr;
  std::vector<char*> argv;
  std::vector<char*> envp;
  const char* working_dir = nullptr;
  const char* exit_file = nullptr;
  const char* exit_partial = nullptr;
  const char* pid_file = nullptr;
  const char* pid_partial = nullptr;
  int null_fd = -1;
  int out_fd = -1;
  int err_fd = -1;
  /// The write end of the pipe the head reads `launch_report` from.
  int report_fd = -1;
};

/// The driver's process, after its fork from the supervisor: a process
/// group of its own, default signal handling, into its directory, exec.
[[noreturn]] void run_driver(const prepared& p, int exec_fd, pid_t supervisor) {
  ::setpgid(0, 0);
  // A supervisor that is killed (`prism stop` past its grace) takes the
  // driver with it: nothing else would end it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != supervisor)
    ::_exit(127);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP)
      ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  int failure[2] = {0, 0};
  if (::chdir(p.working_dir) != 0) {
    failure[0] = step_chdir;
    failure[1] = errno;
  } else {
    ::execve(p.program, p.argv.data(), p.envp.data());
    failure[0] = step_exec;
    failure[1] = errno;
  }
  write_fully(exec_fd, reinterpret_cast<const char*>(failure), sizeof(failure));
  ::_exit(127);
}

/// Writes how the driver ended where the head reads it: beside the file
/// first, then renamed, so a reader sees all of it or nothing.
void write_exit(const prepared& p, int status, bool stopped) {
  char text[160];
  char* end = put_text(text, "prism-job-exit status ");
  end = put_number(end, status);
  end = put_text(end, " stopped ");
  end = put_number(end, stopped ? 1 : 0);
  end = put_text(end, " end_ms ");
  end = put_number(end, now_ms_raw());
  *end++ = '\n';
  int fd =
      ::open(p.exit_partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  write_fully(fd, text, static_cast<std::size_t>(end - text));
  ::fsync(fd);
  ::close(fd);
  ::rename(p.exit_partial, p.exit_file);
}

/// Writes the supervisor's pid to its pid file (for `prism stop`, and for a
/// head that died before it recorded the job as running).
void write_pid_file(const prepared& p, pid_t pid) {
  if (p.pid_file == nullptr)
    return;
  char text[32];
  char* end = put_number(text, pid);
  *end++ = '\n';
  int fd =
      ::open(p.pid_partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  write_fully(fd, text, static_cast<std::size_t>(end - text));
  ::close(fd);
  ::rename(p.pid_partial, p.pid_file);
}

/// Whether the driver ended; it is left unreaped, so that its process
/// group's id stays its own until the group is killed. Sets `lost` if it
/// cannot be waited for.
bool driver_ended(pid_t driver, bool& lost) {
  siginfo_t info{};
  int r = ::waitid(P_PID, static_cast<id_t>(driver), &info,
                   WEXITED | WNOHANG | WNOWAIT);
  if (r < 0 && errno != EINTR)
    lost = true;
  return lost || (r == 0 && info.si_pid == driver);
}

/// The supervisor: starts the driver, reports it, waits for it, ends it
/// when asked, and writes how it ended.
[[noreturn]] void supervise(const prepared& p) {
  sigset_t asked;
  sigemptyset(&asked);
  sigaddset(&asked, SIGTERM);
  sigaddset(&asked, SIGINT);
  sigaddset(&asked, SIGHUP);
  sigset_t waited = asked;
  sigaddset(&waited, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &waited, nullptr);
  // The driver's end must not be reaped away by a disposition the head set.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGCHLD, &dfl, nullptr);
  launch_report report;
  report.supervisor = ::getpid();
  // First who supervises, so that a head that hears no more in time can
  // end it (and the driver with it).
  write_fully(p.report_fd, reinterpret_cast<const char*>(&report.supervisor),
              sizeof(report.supervisor));
  write_pid_file(p, report.supervisor);
  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    report.step = step_fork;
    report.error = errno;
    write_fully(p.report_fd, reinterpret_cast<const char*>(&report),
                sizeof(report));
    ::_exit(1);
  }
  pid_t driver = ::fork();
  if (driver == 0) {
    ::close(exec_pipe[0]);
    ::close(p.report_fd);
    run_driver(p, exec_pipe[1], report.supervisor);
  }
  ::close(exec_pipe[1]);
  // Also here, so that no signal to the group can precede the group.
  if (driver > 0)
    ::setpgid(driver, driver);
  if (driver < 0) {
    report.step = step_fork;
    report.error = errno;
  } else {
    report.driver = driver;
    int failure[2] = {0, 0};
    ssize_t n;
    do
      n = ::read(exec_pipe[0], failure, sizeof(failure));
    while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof(failure))) {
      report.step = failure[0];
      report.error = failure[1];
    }
  }
  ::close(exec_pipe[0]);
  write_fully(p.report_fd, reinterpret_cast<const char*>(&report),
              sizeof(report));
  ::close(p.report_fd);
  if (driver < 0)
    ::_exit(1);
  bool stopping = false;
  bool killed = false;
  bool lost = false;
  std::int64_t kill_at = 0;
  while (!driver_ended(driver, lost)) {
    timespec tick{0, 100 * 1000 * 1000};
    siginfo_t info{};
    int sig = ::sigtimedwait(&waited, &info, &tick);
    if (sig > 0 && sig != SIGCHLD && !stopping && report.step == 0) {
      // A driver that ended by itself meanwhile was not stopped.
      if (driver_ended(driver, lost))
        break;
      stopping = true;
      int grace =
          info.si_code == SI_QUEUE ? info.si_value.sival_int : default_grace_ms;
      kill_at = monotonic_ms_raw() + (grace > 0 ? grace : 0);
      ::kill(-driver, SIGTERM);
    }
    if (stopping && !killed && monotonic_ms_raw() >= kill_at) {
      killed = true;
      ::kill(-driver, SIGKILL);
    }
  }
  // What the driver left in its process group ends with it; the group's id
  // is the driver's until the driver is reaped, after.
  ::kill(-driver, SIGKILL);
  int status = unknown_status;
  if (!lost)
    while (::waitpid(driver, &status, 0) < 0 && errno == EINTR) {
    }
  write_exit(p, status, stopping);
  if (p.pid_file != nullptr)
    ::unlink(p.pid_file);
  ::_exit(0);
}

/// Reads `size` bytes from `fd` into `data` until `deadline` (monotonic
/// milliseconds); false if they did not all come.
bool read_exactly(int fd, void* data, std::size_t size, std::int64_t deadline) {
  auto* at = static_cast<char*>(data);
  std::size_t got = 0;
  while (got < size) {
    auto left = deadline - monotonic_ms_raw();
    if (left <= 0)
      return false;
    pollfd pfd{fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0)
      return false;
    auto n = ::read(fd, at + got, size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

std::string describe_failure(const job_launch& what,
                             const launch_report& report) {
  std::string why = std::strerror(report.error);
  switch (report.step) {
  case step_chdir:
    return "cannot enter the working directory " + what.working_dir +
           " on the head's host: " + why;
  case step_exec:
    return "cannot run " + what.argv.front() + ": " + why;
  default:
    return "cannot start the driver's process: " + why;
  }
}

} // namespace job_launching

job_launched launch_job(const job_launch& what) {
  job_launched result;
  auto argv = what.argv;
  auto env = what.env;
  job_launching::prepared p;
  p.program = what.program.c_str();
  p.argv = c_strings(argv);
  p.envp = c_strings(env);
  p.working_dir = what.working_dir.c_str();
  auto exit_file = what.files.exit_record();
  auto exit_partial = exit_file + ".partial";
  p.exit_file = exit_file.c_str();
  p.exit_partial = exit_partial.c_str();
  auto pid_partial = what.pid_file + ".partial";
  p.pid_file = what.pid_file.empty() ? nullptr : what.pid_file.c_str();
  p.pid_partial = pid_partial.c_str();
  auto open_file = [](const std::string& path, int flags) {
    return ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  };
  p.null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  p.out_fd = open_file(what.files.out(), O_WRONLY | O_CREAT | O_APPEND);
  p.err_fd = open_file(what.files.err(), O_WRONLY | O_CREAT | O_APPEND);
  int report_pipe[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd :
         {p.null_fd, p.out_fd, p.err_fd, report_pipe[0], report_pipe[1]})
      if (fd >= 0)
        ::close(fd);
  };
  if (p.null_fd < 0 || p.out_fd < 0 || p.err_fd < 0 ||
      ::pipe2(report_pipe, O_CLOEXEC) != 0) {
    result.error = "cannot open the job's files in " + what.files.dir + ": " +
                   std::strerror(errno);
    close_all();
    return result;
  }
  p.report_fd = report_pipe[1];
  // Forked twice: the supervisor is not the head's child, so it outlives
  // the head and is reaped by whoever adopts orphans.
  pid_t middle = ::fork();
  if (middle < 0) {
    result.error = std::string{"cannot fork: "} + std::strerror(errno);
    close_all();
    return result;
  }
  if (middle == 0) {
    ::setsid();
    if (::fork() != 0)
      ::_exit(0);
    // The supervisor: its stdio is the job's files (where it writes
    // nothing, but the driver inherits them), and no descriptor of the
    // head stays open in it.
    ::dup2(p.null_fd, STDIN_FILENO);
    ::dup2(p.out_fd, STDOUT_FILENO);
    ::dup2(p.err_fd, STDERR_FILENO);
    ::dup2(p.report_fd, 3);
    if (::close_range(4, ~0U, 0) != 0) {
      // A kernel before 5.9, or a filter that refuses the call.
      rlimit limit{};
      int last = 65536;
      if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 &&
          limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (1u << 20))
        last = static_cast<int>(limit.rlim_cur);
      for (int fd = 4; fd < last; ++fd)
        ::close(fd);
    }
    p.report_fd = 3;
    job_launching::supervise(p);
  }
  ::close(report_pipe[1]);
  report_pipe[1] = -1;
  int middle_status = 0;
  while (::waitpid(middle, &middle_status, 0) < 0 && errno == EINTR) {
  }
  job_launching::launch_report report;
  auto deadline = job_launching::monotonic_ms_raw() + 10000;
  pid_t supervisor = 0;
  if (!job_launching::read_exactly(report_pipe[0], &supervisor,
                                   sizeof(supervisor), deadline)) {
    close_all();
    result.error = "the job's supervisor ended before it started the driver";
    return result;
  }
  bool reported = job_launching::read_exactly(report_pipe[0], &report,
                                              sizeof(report), deadline);
  close_all();
  if (!reported) {
    // Its driver dies with it.
    ::kill(supervisor, SIGKILL);
    result.error = "the job's supervisor did not start the driver within "
                   "10 s; it was ended";
    return result;
  }
  result.supervisor = report.supervisor;
  result.supervisor_start = process_start_time(report.supervisor);
  result.driver = report.driver;
  if (report.step != 0)
    result.error = job_launching::describe_failure(what, report);
  return result;
}

std::optional<job_exit> read_job_exit(const job_files& files) {
  std::ifstream in{files.exit_record()};
  std::string magic, status_word, stopped_word, end_word;
  job_exit result;
  int stopped = 0;
  if (!(in >> magic >> status_word >> result.status >> stopped_word >>
        stopped >> end_word >> result.end_ms) ||
      magic != "prism-job-exit")
    return std::nullopt;
  result.stopped = stopped != 0;
  return result;
}

std::uint64_t process_start_time(pid_t pid) {
  if (pid <= 0)
    return 0;
  std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
  std::string stat{std::istreambuf_iterator<char>{in}, {}};
  // The command name, in parentheses, may hold spaces: count fields after
  // its closing parenthesis. Field 3 is the state, field 22 the start time.
  auto close = stat.rfind(')');
  if (close == std::string::npos)
    return 0;
  std::size_t at = close + 2;
  int field = 3;
  std::string value;
  while (at < stat.size()) {
    auto end = stat.find(' ', at);
    if (end == std::string::npos)
      end = stat.size();
    auto text = stat.substr(at, end - at);
    if (field == 3 && text == "Z")
      return 0;
    if (field == 22)
      return std::strtoull(text.c_str(), nullptr, 10);
    ++field;
    at = end + 1;
  }
  return 0;
}

bool stop_supervised_driver(pid_t pid, std::uint64_t start,
                            std::uint32_t grace_ms) {
  if (start == 0 || process_start_time(pid) != start)
    return false;
  sigval value{};
  value.sival_int = static_cast<int>(
      std::min<std::uint32_t>(grace_ms, static_cast<std::uint32_t>(INT32_MAX)));
  return ::sigqueue(pid, SIGTERM, value) == 0;
}

} // namespace prism::actors
