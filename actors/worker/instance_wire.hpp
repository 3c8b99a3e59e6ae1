#pragma once

// What an actor host and the process its instance runs in say to each other
// (an instance process: forked for one actor instance, with no actor system
// of its own). They talk over a Unix stream socket: frames of a length, a
// kind and a body that CAF serializes without an actor system. Frames go
// both ways at any time; each side reads them in order.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "prism/detail/runtime.hpp"
#include "prism/detail/value.hpp"
#include "prism/ids.hpp"
#include "prism/internal/user_metrics.hpp"
#include "prism/state.hpp"
#include "protocol/state.hpp"

namespace prism::actors::instance_wire {

/// The variable that makes a process forked from the job's program an
/// instance process: the name of its host's socket in the abstract
/// namespace (without the leading '\0').
inline constexpr const char* socket_variable = "PRISM_INSTANCE_SOCKET";

/// The variable with the one-time token the process says first, by which
/// its host knows which instance it is.
inline constexpr const char* token_variable = "PRISM_INSTANCE_TOKEN";

/// The largest frame either side takes: a value larger than this does not
/// cross (the node's message limit is lower by default).
inline constexpr std::uint64_t max_frame = std::uint64_t{4} << 30;

enum class kind : std::uint8_t {
  /// process -> host, first: `hello`.
  hello = 1,
  /// host -> process: make the instance (`construct`).
  construct = 2,
  /// process -> host: the instance is made, or why not (`constructed`).
  constructed = 3,
  /// host -> process: run a batch of calls in order (`run`).
  run = 4,
  /// process -> host: how each call of a batch ended (`ran`).
  ran = 5,
  /// host -> process: a call is cancelled (`cancel`).
  cancel = 6,
  /// process -> host: a call of Prism's API that the host's runtime makes
  /// for the instance (`runtime_call`).
  runtime_call = 7,
  /// host -> process: how a runtime call went (`runtime_answer`).
  runtime_answer = 8,
  /// process -> host: an asynchronous call that waited may go on (`wake`).
  wake = 9,
  /// process -> host: the user metrics that changed (`metrics`).
  metrics = 10,
};

struct hello {
  std::string token;
  std::int32_t pid = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, hello& x) {
  return f(x.token, x.pid);
}

struct construct {
  std::string factory;
  std::vector<detail::value> args;
  actor_id actor;
  std::int32_t num_restarts = 0;
  /// The class its output lines name (common/output_source.hpp).
  std::string source;
  /// What the instance's runtime says it is (`detail::runtime::self`,
  /// `node`, `current_job`).
  worker_id self;
  node_id node;
  job_id job;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, construct& x) {
  return f(x.factory, x.args, static_cast<unique_id&>(x.actor), x.num_restarts,
           x.source, static_cast<unique_id&>(x.self),
           static_cast<unique_id&>(x.node), x.job);
}

struct constructed {
  /// Why no instance was made; empty if one was.
  std::string failure;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, constructed& x) {
  return f(x.failure);
}

/// One call of a batch.
struct call {
  task_id task;
  std::string method;
  std::vector<detail::value> args;
  /// Whether its start and end are taken (its caller records them).
  bool timed = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, call& x) {
  return f(x.task, x.method, x.args, x.timed);
}

struct run {
  std::uint64_t batch = 0;
  std::vector<call> calls;
  /// The calls are asynchronous ones that waited and go on now (each
  /// names its task only).
  bool resume = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, run& x) {
  return f(x.batch, x.calls, x.resume);
}

/// How one call ended.
struct outcome {
  task_id task;
  bool ok = false;
  detail::value result;
  detail::error_info error;
  std::int64_t start_us = 0;
  std::int64_t end_us = 0;
  /// An asynchronous call waits (`prism::future`): it goes on once its
  /// process says it may (`wake`) and its host resumes it (`run::resume`).
  bool waits = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, outcome& x) {
  return f(x.task, x.ok, x.result, x.error, x.start_us, x.end_us, x.waits);
}

struct ran {
  std::uint64_t batch = 0;
  /// One for each call that ran or was refused, in order; the calls after
  /// the last are not run (the instance exits).
  std::vector<outcome> outcomes;
  /// A call asked the actor to end (`exit_actor`).
  bool exit_requested = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ran& x) {
  return f(x.batch, x.outcomes, x.exit_requested);
}

struct cancel {
  task_id task;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cancel& x) {
  return f(x.task);
}

struct metrics {
  std::vector<internal::user_series> series;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, metrics& x) {
  return f(x.series);
}

struct wake {
  task_id task;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, wake& x) {
  return f(x.task);
}

/// What a runtime call asks for: a `detail::runtime` member of that name.
enum class op : std::uint8_t {
  submit_task = 1,
  put,
  get,
  wait,
  create_actor,
  submit_actor_task,
  find_actor,
  cancel,
  kill_actor,
  kv_put,
  kv_get,
  kv_del,
  kv_keys,
  list_state,
  get_state,
  summarize_state,
  borrow,
  hold,
  /// Drops one reference to each of `refs`; answered by nothing.
  release,
  /// Answered once the object of `refs` is ready (or failed), however
  /// long that takes.
  when_ready,
  /// The process is done with the bytes of a value its host kept for it
  /// (`runtime_answer::in_place`, numbered `number`); answered by nothing.
  release_value,
};

/// A call of Prism's API made by the instance, which its host's runtime
/// makes. One struct for every `op`: each reads the fields it names, and
/// the others stay empty.
struct runtime_call {
  /// Names the answer; 0 for a call that is not answered (`release`).
  std::uint64_t id = 0;
  /// The call of the instance it is made in, which a cancellation of that
  /// call stops; none outside of one.
  task_id task;
  op what = op::put;
  /// The function, factory, method, actor name, namespace or state id.
  std::string name;
  /// A key, a namespace of `find_actor` (with `flag`), a prefix, a group
  /// key.
  std::string key;
  /// A value of the key-value table.
  std::string text;
  std::vector<detail::task_arg> args;
  detail::value value;
  /// The objects it is about: of `get`, `wait`, `cancel`, `borrow`,
  /// `hold`, `release`.
  std::vector<detail::contained_ref> refs;
  actor_id actor;
  /// A class tag, `num_returns`, or a state kind.
  std::uint64_t number = 0;
  /// Negative waits forever.
  std::int64_t timeout_ms = -1;
  /// `overwrite`, `force`, `no_restart`, or whether `key` is a namespace.
  bool flag = false;
  /// `recursive`.
  bool flag2 = false;
  detail::task_options task_options;
  detail::actor_options actor_options;
  detail::call_options call_options;
  state::list_options list_options;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, runtime_call& x) {
  auto& t = x.task_options;
  auto& a = x.actor_options;
  return f(x.id, x.task, x.what, x.name, x.key, x.text, x.args, x.value, x.refs,
           static_cast<unique_id&>(x.actor), x.number, x.timeout_ms, x.flag,
           x.flag2, t.name, t.resources, t.max_retries, t.retry_exceptions,
           t.retry_exception_types, static_cast<unique_id&>(t.affinity),
           t.affinity_soft, t.durable, a.name, a.ns, a.detached, a.max_restarts,
           a.max_task_retries, a.max_concurrency, a.resources, a.shared_host,
           a.get_if_exists, a.concurrency_groups,
           x.call_options.concurrency_group, x.list_options.filters,
           x.list_options.limit, x.list_options.cursor);
}

/// Where the bytes of a value lie in its node's store (`internal::
/// object_arena`), which the process maps to read them in place; its host
/// keeps them there (pinned) until the process releases them
/// (`op::release_value`).
struct in_place {
  /// Numbers what the host keeps; 0: the bytes came along.
  std::uint64_t handle = 0;
  std::string path;
  std::uint64_t capacity = 0;
  unique_id mark;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, in_place& x) {
  return f(x.handle, x.path, x.capacity, x.mark, x.offset, x.size);
}

/// How a runtime call went: `error` is not ok if it threw. Each call fills
/// the fields of its result.
struct runtime_answer {
  std::uint64_t id = 0;
  detail::error_info error;
  /// The ref made (`submit_task`, `put`, `submit_actor_task`, `borrow`).
  std::vector<detail::contained_ref> refs;
  detail::value value;
  /// Of `wait`: which are ready.
  std::vector<std::uint8_t> ready;
  actor_id actor;
  /// Whether `find_actor` found one, `kv_put` or `kv_del` found the key,
  /// `kv_get` or `get_state` found something.
  bool found = false;
  std::string text;
  std::vector<std::string> keys;
  state::page page;
  state::entry entry;
  std::vector<state::count> counts;
  /// The bytes of `value` (of `get`), if they lie in the node's store.
  in_place bytes;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, runtime_answer& x) {
  auto& p = x.page;
  return f(x.id, x.error, x.refs, x.value, x.ready,
           static_cast<unique_id&>(x.actor), x.found, x.text, x.keys, p.entries,
           p.matched, p.total, p.next_cursor, p.dropped_events,
           p.forgotten_tasks, p.nodes_unanswered, x.entry.fields,
           x.entry.history, x.counts, x.bytes);
}

/// A frame as read: its kind and body, not yet decoded.
struct frame {
  kind what = kind::hello;
  std::vector<char> body;
};

/// The bytes of a frame: its length (of what follows, 8 bytes), its kind,
/// then `body`.
template <class T>
std::vector<char> encode(kind what, const T& body);

/// Decodes the body of `f` into `out`; false if it is malformed.
template <class T>
bool decode(const frame& f, T& out);

/// Writes `bytes` (a frame) to `fd` whole; false if the socket broke.
bool write_frame(int fd, const std::vector<char>& bytes);

/// Reads one frame from the blocking socket `fd`; nullopt at the end of
/// the stream, on an error, or for a frame longer than `max_frame` or of
/// an unknown kind.
std::optional<frame> read_frame(int fd);

/// Collects frames from bytes as a non-blocking socket gives them.
class frame_reader {
public:
  /// Takes `n` bytes read.
  void take(const char* data, std::size_t n);

  /// The next whole frame, if one is complete.
  std::optional<frame> next();

  /// A frame longer than `max_frame` or of an unknown kind came: the peer
  /// does not speak this wire, and nothing after it is read.
  bool broken() const noexcept {
    return broken_;
  }

private:
  std::vector<char> buf_;
  std::size_t start_ = 0;
  bool broken_ = false;
};

} // namespace prism::actors::instance_wire
