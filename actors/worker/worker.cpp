#include "worker/worker.hpp"

#include <algorithm>
#include <chrono>
#include <unordered_set>
#include <vector>

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "common/output_source.hpp"
#include "common/user_errors.hpp"
#include "gcs/gcs_client.hpp"
#include "owner/owner_client.hpp"
#include "prism/detail/exception_types.hpp"
#include "prism/detail/function_registry.hpp"
#include "prism/internal/task_events.hpp"
#include "protocol/gcs_raylet_actors.hpp"
#include "protocol/object_store.hpp"
#include "protocol/owner_worker.hpp"
#include "worker/actor_host.hpp"

namespace prism::actors {

namespace {

// One logger for every instance; looking it up by name takes a global lock.
const std::shared_ptr<spdlog::logger>& worker_logger() {
  static const auto log = component_logger("worker");
  return log;
}

struct worker_state {
  static inline const char* name = "worker";

  worker_config cfg;
  std::shared_ptr<spdlog::logger> log;
  caf::actor owner;
  std::shared_ptr<owner_client> client;
  std::shared_ptr<run_control> runs;
  /// The actor instances this worker hosts: one, or any number of its
  /// job's shared ones.
  std::unordered_set<caf::actor_addr> hosts;
  /// Whether it hosts shared actors (it lives on when one ends).
  bool shared = false;
  /// What the owner clients of its actors share; made with the first.
  std::unique_ptr<actor_client_settings> actor_clients;
  /// Starts of its hosts, to report together (`report_atom`).
  protocol::actors_started started;
  bool report_scheduled = false;
};

/// The worker reports the starts of its hosts.
using report_atom = caf::atom_constant<caf::atom("report")>;

using worker_actor = caf::stateful_actor<worker_state>;

/// How long the raylet may take to take a large result in.
constexpr auto seal_timeout = std::chrono::seconds{30};

// Runs the task's function on this thread and says how it went in `done`.
void call_function(worker_actor* self, internal::task_spec& spec,
                   protocol::task_done& done) {
  auto& st = self->state;
  note_output_source(spec.function);
  auto* entry = detail::function_registry::instance().find(spec.function);
  if (entry == nullptr) {
    done.error.code = errc::function_not_found;
    done.error.function_name = spec.function;
    done.error.message = "no function named '" + spec.function +
                         "' is registered in this worker";
    return;
  }
  std::vector<detail::value> args;
  args.reserve(spec.args.size());
  st.client->begin_task(spec.id, spec.job, spec.attempt);
  detail::set_thread_runtime(st.client.get());
  answer_after_borrows borrows{spec.owner};
  try {
    // A large argument kept in a node's store comes as a ref: this worker
    // reads it from the nearest copy, as a borrower, for the length of the
    // call (the task's owner holds it until the task ends).
    for (auto& arg : spec.args)
      args.push_back(arg.by_ref ? st.client->get(
                                      detail::ref_token{
                                          arg.ref, arg.owner, arg.address, {}},
                                      detail::wait_forever)
                                : std::move(arg.inline_value));
    done.result = entry->call(args);
    done.ok = true;
  } catch (...) {
    done.error = error_of_current_exception(spec.function);
    done.retry_listed = !spec.retry_exception_types.empty() &&
                        detail::exception_is_one_of(std::current_exception(),
                                                    spec.retry_exception_types);
  }
  detail::set_thread_runtime(nullptr);
  st.client->end_task();
}

void run_task(worker_actor* self, protocol::push_task& msg) {
  auto& st = self->state;
  auto& spec = msg.spec;
  protocol::task_done done;
  done.task = spec.id;
  done.attempt = spec.attempt;
  done.lease_id = msg.lease_id;
  done.worker = st.cfg.id;
  done.start_us = internal::unix_us_now();
  if (!st.runs->begin(spec.id)) {
    // Cancelled while it waited here: it never runs.
    done.error.code = errc::task_cancelled;
    done.error.function_name = spec.function;
    done.error.message =
        "task '" + spec.display_name() + "' was cancelled before it started";
    done.run_ns = -1; // it did not run: no measure of how long runs take
    self->send(msg.reply_to, std::move(done));
    return;
  }
  auto start = std::chrono::steady_clock::now();
  detail::set_current_cancel_flag(st.runs->flag());
  call_function(self, spec, done);
  detail::set_current_cancel_flag(nullptr);
  st.runs->end();
  done.run_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now() - start)
                    .count();
  if (st.client->owner_ended()) {
    // This worker was killed while the task ran (its owner went first, with
    // what the task was waiting for). The task's owner learns of the death
    // from the raylet and retries; a report from here, say of the
    // owner_died error the run ran into, could arrive first and end the
    // task for good.
    st.log->debug("dropping the result of task {}: this worker was killed",
                  spec.id.hex());
    return;
  }
  // Refs inside the result stay alive for the task's owner: it is their
  // borrower before this worker lets go of them.
  auto refs = done.result.refs;
  st.client->register_borrower(refs, spec.owner, msg.reply_to);
  if (done.ok && done.result.size() > st.cfg.max_inline_bytes) {
    // A large result stays on this node; the raylet keeps it and tells the
    // owner where it is. The refs inside it are let go once the report is
    // on its way to the owner, which may own one of them itself.
    auto sealed =
        protocol::seal_result{std::move(done), std::move(msg.reply_to)};
    auto release = [client = st.client, refs] { client->release_refs(refs); };
    self->request(st.cfg.raylet, seal_timeout, std::move(sealed))
        .then([release](bool) { release(); },
              [release](caf::error&) { release(); });
    return;
  }
  self->send(msg.reply_to, std::move(done));
  st.client->release_refs(refs);
}

// Hosts one actor instance in this worker's process.
caf::actor host_instance(worker_actor* self, protocol::host_actor& msg) {
  auto& st = self->state;
  if (!st.actor_clients)
    st.actor_clients = std::make_unique<actor_client_settings>(
        st.cfg.node, st.cfg.raylet, st.cfg.gcs, st.cfg.directory,
        st.cfg.max_inline_bytes);
  actor_host_config hc;
  hc.client = st.actor_clients->of(msg.spec.ns);
  hc.spec = std::move(msg.spec);
  hc.incarnation = msg.incarnation;
  hc.pool = st.cfg.actor_pool;
  hc.reporter = self->address();
  hc.instance_process = msg.instance_process;
  auto host = spawn_actor_host(self->system(), std::move(hc));
  self->monitor(host);
  st.hosts.insert(host.address());
  return host;
}

// Hosts actor instances in this worker's process: one, with which the
// worker ends, or any number of its job's shared ones, with which it lives
// on until its node stops it.
caf::result<std::vector<caf::actor>>
host_instances(worker_actor* self, protocol::host_actors& batch) {
  auto& st = self->state;
  if (!st.cfg.actor_pool || batch.empty())
    return caf::make_error(caf::sec::unexpected_message,
                           "this worker hosts no actor instances");
  bool shared = std::all_of(batch.begin(), batch.end(), [](const auto& msg) {
    return msg.spec.shared_host || msg.instance_process;
  });
  if ((!shared && batch.size() > 1) ||
      (!st.hosts.empty() && !(st.shared && shared)))
    return caf::make_error(caf::sec::unexpected_message,
                           "an actor of its own shares no process");
  st.shared = shared;
  std::vector<caf::actor> hosts;
  hosts.reserve(batch.size());
  for (auto& msg : batch)
    hosts.push_back(host_instance(self, msg));
  return hosts;
}

// Reports the hosts of this process that started to the control store, all
// that are waiting in one message.
void report_started(worker_actor* self) {
  auto& st = self->state;
  st.report_scheduled = false;
  auto started = std::move(st.started);
  st.started.clear();
  // Past the endpoint's hop: each host reports again on `gcs_restarted`.
  auto gcs = attached_gcs(st.cfg.gcs);
  if (started.size() == 1)
    self->send(gcs, std::move(started.front()));
  else if (!started.empty())
    self->send(gcs, std::move(started));
}

caf::behavior worker_behavior(worker_actor* self, worker_config cfg,
                              std::shared_ptr<owner_client> client,
                              std::shared_ptr<run_control> runs) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.log = worker_logger();
  install_default_handlers(self, st.log);
  st.client = std::move(client);
  st.runs = std::move(runs);
  st.owner = st.client->owner_handle();
  // The worker and its owner live and die together; both are in this process.
  self->link_to(st.owner);
  st.client->set_in_worker(true);
  self->monitor(st.cfg.raylet);
  set_checked_down_handler(self, [self](caf::down_msg& msg) {
    auto& st = self->state;
    if (msg.source == st.cfg.raylet)
      self->quit(caf::exit_reason::user_shutdown);
    else if (st.hosts.erase(msg.source) > 0 && !st.shared)
      self->quit(caf::exit_reason::normal);
  });
  self->attach_functor(
      [dir = st.cfg.directory, id = st.cfg.id, client = st.client] {
        dir->remove(id);
        detail::error_info err;
        err.code = errc::worker_crashed;
        err.message = "the worker owning this object ended";
        client->fail_all(err);
      });
  return {
      [self](protocol::push_task& msg) { run_task(self, msg); },
      [self](protocol::host_actors& batch) {
        return host_instances(self, batch);
      },
      [self](protocol::actor_started& msg) {
        // From a host of this process: reported with the others that
        // started meanwhile, once the messages before are handled.
        auto& st = self->state;
        st.started.push_back(std::move(msg));
        if (!st.report_scheduled) {
          st.report_scheduled = true;
          self->send(self, report_atom::value);
        }
      },
      [self](report_atom) { report_started(self); },
  };
}

} // namespace

spawned_worker spawn_worker(caf::actor_system& sys, worker_config cfg) {
  // The owner starts first: the raylet hands its handle out with the
  // worker's, for cancellations.
  auto runs = std::make_shared<run_control>();
  owner_client::config oc;
  oc.self = cfg.id;
  oc.node = cfg.node;
  oc.raylet = cfg.raylet;
  oc.gcs = cfg.gcs;
  oc.store = std::make_shared<internal::memory_store>();
  oc.max_inline_bytes = cfg.max_inline_bytes;
  oc.directory = cfg.directory;
  oc.runs = runs;
  oc.job = cfg.job;
  auto client = std::make_shared<owner_client>(sys, std::move(oc));
  auto control = client->owner_handle();
  auto worker = sys.spawn<caf::detached>(worker_behavior, std::move(cfg),
                                         std::move(client), std::move(runs));
  return {std::move(worker), std::move(control)};
}

} // namespace prism::actors
