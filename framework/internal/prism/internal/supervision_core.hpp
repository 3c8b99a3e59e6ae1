#pragma once

// The decisions of a supervisor, apart from any actor: which children to stop
// and start, in which order and when, and when to give up. No threads, no
// clock of its own (the caller passes the time in), no CAF.

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "prism/internal/backoff.hpp"
#include "prism/supervision.hpp"

namespace prism::internal {

/// One child as the decision logic sees it.
struct child_spec {
  std::string id;
  restart_type restart = restart_type::permanent;
  shutdown_spec shutdown;
};

/// What a supervisor's executor does next.
enum class action_kind : std::uint8_t {
  /// Start `child`, not before `not_before`.
  start,
  /// Stop `child` as `shutdown` says, and wait until it is down.
  stop,
  /// Every child is down: exit abnormally so the parent supervisor decides.
  escalate,
  /// Every child is down after `stop_all`: exit as asked.
  exit,
};

/// Returns a short, stable name, e.g. "stop".
const char* to_string(action_kind x) noexcept;

/// One step of a plan.
struct supervision_action {
  using time_point = std::chrono::steady_clock::time_point;

  action_kind kind = action_kind::start;
  std::string child;
  /// For `start`: the earliest time to start (restart backoff); the zero
  /// time point means at once.
  time_point not_before{};
  /// For `stop`: how to stop the child.
  shutdown_spec shutdown;

  friend bool operator==(const supervision_action&,
                         const supervision_action&) = default;
};

/// Everything that remains to be done, in the order to do it: stops first (in
/// reverse start order), then either `escalate`/`exit` or the starts (in start
/// order; by `not_before` under one_for_one and simple_one_for_one, whose
/// children do not depend on each other).
using supervision_plan = std::vector<supervision_action>;

/// Why a supervisor gave up.
enum class escalation_cause : std::uint8_t {
  none,
  /// More than `intensity` restarts within `period`.
  intensity_exceeded,
  /// A child failed to start while the supervisor started up.
  start_failed,
};

/// The state and decisions of one supervisor.
///
/// It keeps the ordered child list and answers every event with the plan that
/// remains, which replaces any plan it gave before. The executor carries out
/// the front action of the latest plan, reports back (`on_stop_sent`,
/// `on_start_sent`, `on_started`, `on_start_failed`, `on_exit`) and asks
/// again; it carries out nothing while a stop or a start is in flight
/// (`stop_in_flight`, `start_in_flight`), so each child starts only once the
/// one before it has. Exits of children the supervisor is stopping itself are
/// never failures.
class supervision_core {
public:
  using clock = std::chrono::steady_clock;
  using time_point = clock::time_point;

  /// Returns numbers uniformly distributed in [0, 1); draws the jitter.
  using random_source = std::function<double()>;

  // -- constructors ---------------------------------------------------------

  /// Takes the children in start order; under simple_one_for_one, exactly one
  /// spec, the template every dynamic child is made from (its id names the
  /// template only). An empty `random` draws from a randomly seeded generator.
  /// Throws `invalid_argument_error` on invalid flags or shutdown specs, an
  /// empty or duplicate id, or a simple_one_for_one without exactly one spec.
  supervision_core(supervisor_flags flags, std::vector<child_spec> children,
                   random_source random = {});

  /// A random source from a generator seeded with `seed`, for reproducible
  /// jitter.
  static random_source seeded(std::uint64_t seed);

  // -- lifecycle events -------------------------------------------------------

  /// Plans the start of every child, in order. A child that fails to start now
  /// makes the supervisor escalate (cause `start_failed`).
  supervision_plan start_all();

  /// The executor began to start `id`, and will report `on_started` or
  /// `on_start_failed` once the child says how its start went. Until then the
  /// start is in flight and the child neither runs nor is down.
  supervision_plan on_start_sent(const std::string& id);

  /// `id` started: at once (no `on_start_sent` before), or the start in
  /// flight completed. A child asked to stop meanwhile stops now.
  supervision_plan on_started(const std::string& id, time_point now);

  /// The executor could not start `id`, or its start in flight failed. During
  /// `start_all` this escalates; for `start_child`/`add_child` the child stays
  /// stopped (a new dynamic child is dropped); for a restart it counts as an
  /// abnormal exit. A child asked to stop meanwhile is simply down.
  supervision_plan on_start_failed(const std::string& id, time_point now);

  /// The executor asked `id` to stop (or killed it); its exit is on the way.
  supervision_plan on_stop_sent(const std::string& id);

  /// `id` went down. If its start was in flight, the start failed (see
  /// `on_start_failed`). If the supervisor was stopping it, that is the end of
  /// the stop. Otherwise, by its restart type: a permanent child, and a
  /// transient one that exited abnormally, is restarted with its siblings as
  /// the strategy says (past the intensity: escalation); a temporary child is
  /// forgotten. It is not an error if `id` is unknown or already down.
  supervision_plan on_exit(const std::string& id, child_exit how,
                           time_point now);

  /// Plans the shutdown of the supervisor: every live child stops, in reverse
  /// start order, and no child starts again; the plan ends with `exit`.
  supervision_plan stop_all();

  // -- children at run time ---------------------------------------------------

  // Each returns `supervisor_errc::none` if it took the request, else why it
  // refused it (a refusal plans nothing).

  /// simple_one_for_one: adds a child named `id` from the template and plans
  /// its start.
  [[nodiscard]] supervisor_errc add_child(const std::string& id);

  /// Plans the start of the stopped child `id` (no backoff, not a restart);
  /// under simple_one_for_one, an unknown `id` is added as by `add_child`.
  [[nodiscard]] supervisor_errc start_child(const std::string& id);

  /// Plans the stop of `id` and cancels any restart; the child stays in the
  /// list, stopped (a temporary one is forgotten). It is not an error if the
  /// child is already down.
  [[nodiscard]] supervisor_errc terminate_child(const std::string& id);

  /// Forgets the stopped child `id`.
  [[nodiscard]] supervisor_errc delete_child(const std::string& id);

  // -- queries ----------------------------------------------------------------

  /// What remains to be done; see `supervision_plan`.
  supervision_plan plan() const;

  /// Whether a child was asked to stop and is not down yet.
  bool stop_in_flight() const noexcept;

  /// Whether a child's start was sent and has not completed yet.
  bool start_in_flight() const noexcept;

  /// Whether a start planned by `start_all` has not completed yet: false once
  /// every child was started once (or failed to), so the supervisor itself
  /// counts as started.
  bool starting_up() const noexcept;

  /// Whether the supervisor gave up, and why.
  escalation_cause escalation() const noexcept {
    return escalation_;
  }

  /// Whether `stop_all` was called.
  bool shutting_down() const noexcept {
    return shutting_down_;
  }

  /// The children in start order.
  std::vector<child_info> which_children() const;

  /// The child `id`, if the supervisor knows it.
  std::optional<child_info> find(const std::string& id) const;

  /// Whether `id` is down and no start of it is planned: a start requested
  /// for it failed or was cancelled. False for unknown children.
  bool settled_down(const std::string& id) const;

  /// Whether `id` is down: not running, not stopping, not starting. True for
  /// unknown children.
  bool down(const std::string& id) const;

  const supervisor_flags& flags() const noexcept {
    return flags_;
  }

private:
  // -- member types -----------------------------------------------------------

  enum class child_status : std::uint8_t {
    stopped,
    /// The start was sent and has not completed.
    starting,
    running,
    stopping
  };

  enum class start_reason : std::uint8_t { initial, restart, command };

  struct child {
    child_spec spec;
    child_status status = child_status::stopped;
    /// The plan stops this child; its exit is not a failure.
    bool must_stop = false;
    /// The plan starts this child.
    bool start_pending = false;
    /// Why the plan starts it.
    start_reason reason = start_reason::initial;
    /// Why the start in flight was made (a new start may be planned already).
    start_reason in_flight = start_reason::initial;
    time_point not_before{};
    /// Forget the child once it is down (a temporary child stopped by the
    /// supervisor).
    bool forget_when_down = false;
    int restarts = 0;
    /// Restarts in a row, for the backoff.
    int consecutive = 0;
    bool ever_started = false;
    /// When the current run of the child began; empty once it failed.
    std::optional<time_point> up_since;
  };

  // -- internal helpers -------------------------------------------------------

  child* lookup(const std::string& id);

  const child* lookup(const std::string& id) const;

  std::size_t index_of(const std::string& id) const;

  /// Marks the planned start of `c` as sent.
  static void begin_start(child& c);

  /// Whether `c` is alive or about to be: its actor may need stopping.
  static bool is_up(const child& c);

  void forget(const std::string& id);

  /// Records a restart at `now`; false if it exceeds the intensity.
  bool count_restart(time_point now);

  /// The pause before restarting `c`, bumping its run of restarts.
  std::chrono::milliseconds next_delay(child& c, time_point now);

  /// Restarts the child at `index`, which failed at `now`, with the siblings
  /// the strategy names.
  void restart_after_failure(std::size_t index, time_point now);

  /// Stops every live child and cancels every start.
  void escalate(escalation_cause cause);

  // -- member variables -------------------------------------------------------

  supervisor_flags flags_;
  /// The simple_one_for_one template.
  std::optional<child_spec> template_;
  /// In start order.
  std::vector<child> children_;
  /// Times of recent restarts, oldest first.
  std::deque<time_point> restarts_;
  random_source random_;
  escalation_cause escalation_ = escalation_cause::none;
  bool shutting_down_ = false;
};

} // namespace prism::internal
