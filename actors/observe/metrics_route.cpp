#include "observe/metrics_route.hpp"

#include <caf/all.hpp>

#include "observe/asking.hpp"
#include "observe/metrics_page.hpp"
#include "protocol/metrics.hpp"

namespace prism::actors {

http_route metrics_route(metrics_sources s) {
  return [s](const http_request& req) {
    metrics_page page;
    if (s.node) {
      auto m = ask_within<protocol::node_metrics>(
          *s.sys, s.node, protocol::query_node_metrics{}, s.timeout);
      page.add_source("node", m.has_value());
      if (m)
        page.add(*m);
    }
    if (s.gcs) {
      auto c = ask_within<protocol::control_metrics>(
          *s.sys, s.gcs, protocol::query_control_metrics{}, s.timeout);
      page.add_source("control_store", c.has_value());
      if (c)
        page.add(*c);
      auto t = ask_within<protocol::task_metrics>(
          *s.sys, s.gcs, protocol::query_task_metrics{}, s.timeout);
      page.add_source("task_events", t.has_value());
      if (t)
        page.add(*t);
    }
    if (s.autoscaler)
      page.add_autoscaler(s.autoscaler());
    page.add(req.port, req.counters);
    http_reply reply;
    reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
    reply.body = page.text();
    return reply;
  };
}

} // namespace prism::actors
