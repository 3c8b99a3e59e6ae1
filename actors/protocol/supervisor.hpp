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

/// supervisor -> child actor's stand-in -> the actor's host: how many calls
/// wait in the host, taken in and not handed to a thread yet. Answered with
/// a `std::uint64_t`, or an error while the actor is not alive.
using queue_length_atom = caf::atom_constant<caf::atom("queuelen")>;

// -- errors -------------------------------------------------------------------

/// The errors a supervisor answers or exits with (error category
/// "supervisor"). Defined with the rest of supervision in
/// prism/supervision.hpp, where the supervision core returns it; named here
/// too, by its category.
using prism::supervisor_errc;

/// The error category of `supervisor_errc`.
inline constexpr caf::atom_value supervisor_error_category =
    caf::atom("supervisor");

} // namespace prism::protocol

namespace prism {

// In the namespace of `supervisor_errc`, where CAF looks for them: a
// `caf::error` converts from, and compares with, a `supervisor_errc`.

inline caf::error make_error(supervisor_errc x) {
  return {static_cast<std::uint8_t>(x), protocol::supervisor_error_category};
}

inline caf::error make_error(supervisor_errc x, std::string context) {
  return {static_cast<std::uint8_t>(x), protocol::supervisor_error_category,
          caf::make_message(std::move(context))};
}

} // namespace prism

namespace prism::protocol {

using prism::make_error;

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
