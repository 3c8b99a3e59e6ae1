#pragma once

// One question to an actor of the cluster from a thread outside CAF's
// scheduler (an HTTP route thread), with a deadline: the pages of a
// process's HTTP port ask so.

#include <chrono>
#include <optional>
#include <utility>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/error.hpp>
#include <caf/scoped_actor.hpp>

namespace prism::actors {

/// `whom`'s answer to `question` within `timeout`; nullopt if it answered
/// otherwise, failed or took longer.
template <class Answer, class Question>
std::optional<Answer> ask_within(caf::actor_system& sys, const caf::actor& whom,
                                 const Question& question,
                                 std::chrono::milliseconds timeout) {
  std::optional<Answer> answer;
  if (!whom)
    return answer;
  caf::scoped_actor self{sys};
  self->request(whom, timeout, question)
      .receive([&](Answer& x) { answer = std::move(x); }, [](caf::error&) {});
  return answer;
}

} // namespace prism::actors
