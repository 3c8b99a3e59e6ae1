#pragma once

// The head's status page: static files compiled into the binary (no CDN:
// clusters often have no internet) and the JSON they read, each route a
// few bounded questions to the control store and the nodes. Read-only: no
// route changes the cluster.
//
//   /                  the page (overview, actors, jobs, charts)
//   /api/overview      nodes with resources, jobs, actors, tasks by state,
//                      waiting demands, recent failures, the autoscaler
//   /api/actors        a page of actors: ?key=&q= (contains), ?state=,
//                      ?cursor=, ?limit= (at most 500)
//   /api/jobs          jobs with their tasks by state, and submitted jobs
//   /api/job_output    a submitted job's driver output: ?id=&err=&offset=
//   /api/worker_logs   the last lines of a job's worker processes: ?job=
//   /api/trees         the supervision trees, as their processes publish
//                      them (supervisor/tree.cpp)
//   /api/history       the last hour's samples (status_history.hpp)

#include <chrono>
#include <map>
#include <string>

#include <caf/actor.hpp>

#include "http/http_server.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace prism::actors {

class status_history;

struct status_page_sources {
  caf::actor_system* sys = nullptr;
  /// The control store.
  caf::actor gcs;
  /// The head's samples; null: the charts stay empty.
  const status_history* history = nullptr;
  /// How long the control store may take to answer one question.
  std::chrono::milliseconds timeout{3000};
  /// How long a node may take (asked all at once).
  std::chrono::milliseconds node_timeout{2000};
  /// How long an answer is given again to the same question (path and
  /// query) before it is asked anew; 0: never.
  std::chrono::milliseconds fresh_for{1000};
};

/// Adds the page's files and JSON routes to `routes`.
void add_status_page_routes(std::map<std::string, http_route>& routes,
                            const status_page_sources& sources);

/// The page's files, by path ("/", "/app.js", "/app.css"): generated from
/// actors/observe/page/ at build time (status_page_files.cpp).
struct status_page_file {
  const char* path;
  const char* content_type;
  const char* body;
};
extern const status_page_file status_page_files[];
extern const std::size_t status_page_file_count;

} // namespace prism::actors
