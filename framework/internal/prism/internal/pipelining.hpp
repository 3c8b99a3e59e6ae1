#pragma once

// How an owner spreads the ready tasks of one scheduling key over the
// workers it leased: how many tasks one worker gets ahead of its replies,
// which lease gets the next task, and how many lease requests stay in flight.
// Plain numbers in, a number or a choice out; the owner keeps the leases and
// the running averages and carries the decisions out.

#include <cstddef>
#include <optional>
#include <span>

namespace prism::internal {

/// Tasks pushed to one worker ahead of its replies once a key's tasks are
/// known to be short. Tasks of unknown or long duration go one at a time, so
/// that N long tasks spread over N workers.
constexpr std::size_t max_pipeline_depth = 64;
constexpr double short_task_ns = 200'000;

/// Lease requests in flight per scheduling key.
constexpr std::size_t max_pending_lease_requests = 10;

/// Whether tasks whose runs take `avg_run_ns` on average are short: known
/// (`avg_run_ns` is not negative) and under `short_task_ns`.
bool is_short_task(double avg_run_ns);

/// How many tasks one lease may have in flight for a scheduling key whose
/// runs take `avg_run_ns` on average (negative while unknown):
/// `max_pipeline_depth` for short tasks, else 1.
std::size_t pipeline_depth(double avg_run_ns);

/// The moving average of a run's duration after one more run of `run_ns`:
/// the first run (`avg_run_ns` negative, unknown) sets it, each later one
/// weighs a fifth.
double next_avg_run_ns(double avg_run_ns, double run_ns);

/// The lease that gets the next task, as an index into `in_flight` (the
/// tasks each lease has in flight): of the leases with fewer than `depth`,
/// the one with the fewest, the first of equals. Nothing if every lease is
/// full or there is none.
std::optional<std::size_t> pick_lease(std::span<const std::size_t> in_flight,
                                      std::size_t depth);

/// How many more lease requests to send for a scheduling key with `ready`
/// tasks waiting and `pending` requests in flight: one per waiting task, up
/// to `max_pending_lease_requests` in flight.
std::size_t lease_requests_to_send(std::size_t ready, std::size_t pending);

} // namespace prism::internal
