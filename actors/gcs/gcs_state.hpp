#pragma once

// The control store actor's state: one struct per table, aggregated, and
// the functions of every table, for the files that make up its behaviour.

#include <memory>

#include <caf/stateful_actor.hpp>

#include "common/log.hpp"
#include "gcs/actor_requests.hpp"
#include "gcs/actor_table.hpp"
#include "gcs/durability.hpp"
#include "gcs/gcs_actor.hpp"
#include "gcs/job_table.hpp"
#include "gcs/kv_table.hpp"
#include "gcs/lineage_table.hpp"
#include "gcs/node_table.hpp"
#include "gcs/placement.hpp"
#include "gcs/recovery.hpp"

namespace prism::actors::gcs_detail {

struct gcs_state {
  static inline const char* name = "gcs";

  std::shared_ptr<spdlog::logger> log;
  durability_state durability;
  node_table nodes;
  job_table jobs;
  actor_table actors;
  kv_table kv;
  lineage_table lineage;
  recovery_state recovery;

  gcs_state() = default;
  gcs_state(const gcs_state&) = delete;
  gcs_state& operator=(const gcs_state&) = delete;
};

} // namespace prism::actors::gcs_detail
