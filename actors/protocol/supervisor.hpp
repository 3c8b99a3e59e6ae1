#pragma once

// The conversation between a supervisor and whoever manages it at run time:
// requests, their replies, and the errors it answers with (registered with
// every other message type in protocol/registration.hpp).

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

#include "prism/supervision.hpp"

namespace prism {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, child_info& x) {
  return f(x.id, x.running, x.restart, x.restarts);
}

} // namespace prism

namespace prism::protocol {

// -- requests -----------------------------------------------------------------

/// anyone -> supervisor: its children in start order. Answered with a
/// `std::vector<child_info>`.
struct which_children {
  std::uint32_t unused = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, which_children& x) {
  return f(x.unused);
}

/// anyone -> supervisor: start the stopped child `id` again; under
/// simple_one_for_one, start a new child `id` from the template. Answered
/// with the child's `caf::actor` once it runs, or a `supervisor_errc`.
struct start_child {
  std::string id;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, start_child& x) {
  return f(x.id);
}

/// anyone -> supervisor: stop child `id` (as its shutdown spec says) and do
/// not restart it; it stays in the list, stopped. Answered with an empty
/// message once the child is down, or a `supervisor_errc`.
struct terminate_child {
  std::string id;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, terminate_child& x) {
  return f(x.id);
}

/// anyone -> supervisor: forget the stopped child `id`. Answered with an
/// empty message, or a `supervisor_errc`.
struct delete_child {
  std::string id;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, delete_child& x) {
  return f(x.id);
}

/// supervisor -> child: answer once your start has completed (a child actor:
/// its constructor ran and it is alive; a supervisor: its children started).
/// Answered with an empty message, or an error if the start failed. Only
/// children whose definition has a `start_timeout` are asked.
struct await_started {
  std::uint32_t unused = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, await_started& x) {
  return f(x.unused);
}

// -- errors -------------------------------------------------------------------

/// The errors a supervisor answers or exits with (error category
/// "supervisor").
enum class supervisor_errc : std::uint8_t {
  /// Exit reason: more restarts than the intensity allows within the period.
  intensity_exceeded = 1,
  /// Exit reason: a child failed to start while the supervisor started up.
  /// As a reply: the requested child failed to start.
  start_failed,
  /// No child has the requested id.
  unknown_child,
  /// A child with the requested id exists already.
  child_exists,
  /// The child is alive; terminate it first.
  child_running,
  /// The child is waiting to be restarted.
  child_restarting,
  /// The request does not apply to this supervisor's strategy.
  not_supported,
  /// The requested id is empty.
  invalid_id,
  /// The supervisor is stopping; it starts and manages nothing any more.
  shutting_down,
};

/// Returns a short, stable name, e.g. "unknown_child".
inline const char* to_string(supervisor_errc x) noexcept {
  switch (x) {
  case supervisor_errc::intensity_exceeded:
    return "intensity_exceeded";
  case supervisor_errc::start_failed:
    return "start_failed";
  case supervisor_errc::unknown_child:
    return "unknown_child";
  case supervisor_errc::child_exists:
    return "child_exists";
  case supervisor_errc::child_running:
    return "child_running";
  case supervisor_errc::child_restarting:
    return "child_restarting";
  case supervisor_errc::not_supported:
    return "not_supported";
  case supervisor_errc::invalid_id:
    return "invalid_id";
  case supervisor_errc::shutting_down:
    return "shutting_down";
  }
  return "unknown";
}

/// The error category of `supervisor_errc`.
inline constexpr caf::atom_value supervisor_error_category =
    caf::atom("supervisor");

inline caf::error make_error(supervisor_errc x) {
  return {static_cast<std::uint8_t>(x), supervisor_error_category};
}

inline caf::error make_error(supervisor_errc x, std::string context) {
  return {static_cast<std::uint8_t>(x), supervisor_error_category,
          caf::make_message(std::move(context))};
}

// -- rendering ----------------------------------------------------------------

/// Renders a `supervisor_errc` error, with its context, for
/// `caf::actor_system::render`; `add_message_types` (protocol/registration.hpp)
/// registers it.
inline std::string render_supervisor_error(std::uint8_t code, caf::atom_value,
                                           const caf::message& context) {
  std::string result = "supervisor: ";
  result += to_string(static_cast<supervisor_errc>(code));
  if (!context.empty())
    result += " (" + caf::to_string(context) + ")";
  return result;
}

} // namespace prism::protocol
