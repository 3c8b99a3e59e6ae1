#include "gcs/node_lists.hpp"

#include <map>
#include <memory>
#include <set>
#include <vector>

#include <caf/all.hpp>

#include "gcs/gcs_state.hpp"
#include "prism/internal/state_query.hpp"

namespace prism::actors::gcs_detail {

namespace {

/// How long a node may take to answer: its lists are built on its raylet's
/// thread, a few hundred milliseconds for a million objects.
constexpr auto node_answer_timeout = std::chrono::seconds{5};

/// Asks every alive node `msg`; once each answered or timed out, calls
/// `done(answers, unanswered)` with the answers of those that did.
template <class Reply, class Message, class Done>
void ask_every_node(gcs_actor* self, const Message& msg, Done done) {
  struct gathered {
    std::vector<Reply> answers;
    std::uint64_t unanswered = 0;
    std::size_t left = 0;
    Done done;
  };
  auto g = std::make_shared<gathered>(gathered{{}, 0, 0, std::move(done)});
  for (const auto& [id, n] : self->state.nodes.entries)
    if (n.info.alive && n.info.raylet)
      ++g->left;
  if (g->left == 0) {
    g->done(std::move(g->answers), 0);
    return;
  }
  auto one_done = [g] {
    if (--g->left == 0)
      g->done(std::move(g->answers), g->unanswered);
  };
  for (const auto& [id, n] : self->state.nodes.entries)
    if (n.info.alive && n.info.raylet)
      self->request(n.info.raylet, node_answer_timeout, msg)
          .then(
              [g, one_done](Reply& r) {
                g->answers.push_back(std::move(r));
                one_done();
              },
              [g, one_done](caf::error&) {
                ++g->unanswered;
                one_done();
              });
}

/// The first refusal among `answers`, if any.
template <class Reply>
const detail::error_info* refusal_in(const std::vector<Reply>& answers) {
  for (const auto& a : answers)
    if (a.error.code != errc::ok)
      return &a.error;
  return nullptr;
}

} // namespace

bool held_by_nodes(state::kind k) noexcept {
  return k == state::kind::workers || k == state::kind::objects;
}

void list_from_nodes(gcs_actor* self, protocol::list_state msg,
                     caf::response_promise rp) {
  // A bad filter is refused here, before any node is asked.
  try {
    state::list_options o;
    o.filters = msg.filters;
    internal::page_builder check{msg.kind, o};
  } catch (const prism::error& e) {
    rp.deliver(protocol::state_page{{}, protocol::error_info_of(e)});
    return;
  }
  auto kind = msg.kind;
  auto limit = msg.limit;
  ask_every_node<protocol::state_page>(
      self, msg,
      [rp, kind, limit](std::vector<protocol::state_page> answers,
                        std::uint64_t unanswered) mutable {
        protocol::state_page result;
        if (auto* refused = refusal_in(answers)) {
          result.error = *refused;
          rp.deliver(std::move(result));
          return;
        }
        std::vector<state::page> pages;
        pages.reserve(answers.size());
        for (auto& a : answers)
          pages.push_back(std::move(a.page));
        result.page = internal::merge_pages(kind, std::move(pages),
                                            static_cast<std::size_t>(limit));
        result.page.nodes_unanswered = unanswered;
        rp.deliver(std::move(result));
      });
}

void get_from_nodes(gcs_actor* self, protocol::get_state msg,
                    caf::response_promise rp) {
  auto kind = msg.kind;
  auto wanted = msg.id;
  ask_every_node<protocol::state_found>(
      self, msg,
      [rp, kind, wanted](std::vector<protocol::state_found> answers,
                         std::uint64_t unanswered) mutable {
        protocol::state_found result;
        if (auto* refused = refusal_in(answers)) {
          result.error = *refused;
          rp.deliver(std::move(result));
          return;
        }
        // Each node sends every match as a copy in the history; an object
        // may have copies on several nodes.
        std::set<std::string> ids;
        for (auto& a : answers) {
          if (!a.found)
            continue;
          if (!result.found) {
            result.found = true;
            result.entry.fields = a.entry.fields;
          }
          for (auto& copy : a.entry.history) {
            ids.insert(copy.empty() ? std::string{} : copy.front().second);
            result.entry.history.push_back(std::move(copy));
          }
        }
        if (ids.size() > 1) {
          result = {};
          result.error = {errc::invalid_argument,
                          "'" + wanted + "' names " +
                              std::to_string(ids.size()) + " " +
                              state::to_string(kind) + "; give more of the id",
                          "", ""};
        } else if (!result.found && unanswered > 0) {
          result.error = {errc::timeout,
                          std::to_string(unanswered) +
                              " nodes did not answer in time; '" + wanted +
                              "' may be on one of them",
                          "", ""};
        }
        // A worker has no history; an object's copies are its history.
        if (kind != state::kind::objects)
          result.entry.history.clear();
        rp.deliver(std::move(result));
      });
}

void summarize_from_nodes(gcs_actor* self, protocol::summarize_state msg,
                          caf::response_promise rp) {
  try {
    internal::column_index(msg.kind, msg.group_key);
  } catch (const prism::error& e) {
    rp.deliver(protocol::state_counts{{}, protocol::error_info_of(e), 0});
    return;
  }
  ask_every_node<protocol::state_counts>(
      self, msg,
      [rp](std::vector<protocol::state_counts> answers,
           std::uint64_t unanswered) mutable {
        protocol::state_counts result;
        if (auto* refused = refusal_in(answers)) {
          result.error = *refused;
          rp.deliver(std::move(result));
          return;
        }
        std::map<std::pair<std::string, std::string>, std::uint64_t> sums;
        for (auto& a : answers)
          for (auto& c : a.counts)
            sums[{c.group, c.state}] += c.n;
        for (auto& [key, n] : sums)
          result.counts.push_back({key.first, key.second, n});
        result.nodes_unanswered = unanswered;
        rp.deliver(std::move(result));
      });
}

} // namespace prism::actors::gcs_detail
