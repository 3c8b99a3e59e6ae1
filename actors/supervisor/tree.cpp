// `prism::supervisor`: supervision trees whose children are Prism actors,
// on the supervisor engine (supervisor.hpp) and its child stand-ins
// (actor_child.hpp).

#include "prism/supervisor.hpp"

#include "prism/api.hpp"

#include <chrono>
#include <unistd.h>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "protocol/kv.hpp"

#include "owner/owner_client.hpp"
#include "protocol/supervisor.hpp"
#include "supervisor/actor_child.hpp"
#include "supervisor/supervisor.hpp"

namespace prism {

namespace {

constexpr auto control_timeout = std::chrono::seconds{10};

/// How long a child actor may take to be alive (placed, constructed) before
/// its start counts as failed.
constexpr auto actor_start_timeout = std::chrono::milliseconds{30'000};

/// What a nested supervisor may take beyond its children's own starts.
constexpr auto supervisor_start_slack = std::chrono::milliseconds{10'000};

struct tree_env {
  caf::actor gcs;
  job_id job;
  std::string ns;
};

actors::child_definition definition_of(const child_spec& c,
                                       const tree_env& env) {
  actors::child_definition def;
  def.id = c.id;
  def.restart = c.restart_policy;
  def.shutdown = c.shutdown_policy;
  if (c.is_supervisor) {
    std::vector<actors::child_definition> children;
    // Its children start one after the other, each within its own timeout.
    auto timeout = supervisor_start_slack;
    for (auto& n : c.nested) {
      children.push_back(definition_of(n, env));
      timeout +=
          children.back().start_timeout.value_or(std::chrono::milliseconds{0});
    }
    def.start_timeout = timeout;
    def.supervisor = true;
    def.start = [flags = c.nested_flags,
                 children = std::move(children)](caf::actor_system& sys) {
      return actors::spawn_supervisor(sys, flags, children);
    };
    return def;
  }
  internal::actor_spec tmpl;
  tmpl.job = env.job;
  tmpl.factory = c.factory;
  tmpl.class_tag = c.class_tag;
  tmpl.args = c.args;
  tmpl.ns = env.ns;
  tmpl.resources = internal::resource_set{c.needs};
  // The supervisor restarts the child, not the control store.
  tmpl.max_restarts = 0;
  def.start_timeout = actor_start_timeout;
  def.start_named = [tmpl, gcs = env.gcs](caf::actor_system& sys,
                                          const std::string& id) {
    auto spec = tmpl;
    spec.id = actor_id{unique_id::random()};
    spec.owner = worker_id{unique_id::random()};
    spec.name = id;
    return actors::spawn_actor_child(sys, std::move(spec), gcs);
  };
  return def;
}

using tick_atom = caf::atom_constant<caf::atom("treetick")>;

/// How often a tree's description is read, and published if it changed.
constexpr auto report_interval = std::chrono::seconds{1};
/// How long the control store may take to take one.
constexpr auto report_timeout = std::chrono::seconds{5};

struct reporter_state {
  static inline const char* name = "supervision_reporter";
  std::string last;
  bool writing = false;
  /// The root is down: the entry is being removed, and nothing may write
  /// it again (a description asked before may still come back).
  bool done = false;
};

/// Publishes the description of the tree under `root` in the key-value
/// table (namespace `actors::supervision_namespace`, key `key`) for the
/// status page: at once, then whenever it changed, at most once a
/// `report_interval`. Once the root is down it removes the key and ends.
caf::behavior supervision_reporter(caf::stateful_actor<reporter_state>* self,
                                   caf::actor root, caf::actor gcs,
                                   std::string key, nlohmann::json about) {
  auto log = actors::component_logger("supervisor");
  actors::install_default_handlers(self, log);
  self->monitor(root);
  actors::set_checked_down_handler(self, [self, gcs, key](caf::down_msg&) {
    self->state.done = true;
    self->request(gcs, report_timeout,
                  protocol::kv_del{actors::supervision_namespace, key, {}})
        .then([self](bool) { self->quit(); },
              [self](caf::error&) { self->quit(); });
  });
  self->send(self, tick_atom::value);
  return {
      [=](tick_atom) {
        if (self->state.done)
          return;
        self->delayed_send(self, report_interval, tick_atom::value);
        if (self->state.writing)
          return;
        self->request(root, report_interval, actors::describe_tree_atom::value)
            .then(
                [=](std::string& tree) {
                  if (self->state.done || tree == self->state.last)
                    return;
                  auto doc = about;
                  doc["tree"] = nlohmann::json::parse(tree, nullptr, false);
                  doc["updated_ms"] =
                      std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
                  self->state.writing = true;
                  self->request(gcs, report_timeout,
                                protocol::kv_put{actors::supervision_namespace,
                                                 key,
                                                 doc.dump(),
                                                 true,
                                                 {}})
                      .then(
                          [=](bool) {
                            self->state.writing = false;
                            self->state.last = tree;
                          },
                          [=](caf::error&) { self->state.writing = false; });
                },
                [](caf::error&) {});
      },
  };
}

} // namespace

struct supervisor::impl {
  caf::actor_system* sys = nullptr;
  caf::actor root;
  /// Publishes the tree for the status page; ends once the root is down.
  caf::actor reporter;
};

supervisor supervisor::start(supervisor_flags flags,
                             std::vector<child_spec> children,
                             const std::string& ns) {
  // The caller's client: the driver's, or a worker's while it runs a task,
  // whose job the children join.
  auto& client = static_cast<actors::owner_client&>(detail::current_runtime());
  tree_env env{client.gcs(), client.current_job(),
               ns.empty() ? client.ns() : ns};
  std::vector<actors::child_definition> defs;
  for (auto& c : children)
    defs.push_back(definition_of(c, env));
  auto p = std::make_shared<impl>();
  p->sys = &client.system();
  p->root = actors::spawn_supervisor(client.system(), flags, std::move(defs));
  auto key = unique_id::random().hex();
  nlohmann::json about{
      {"key", key},
      {"job", env.job.value},
      {"namespace", env.ns},
      {"pid", ::getpid()},
      {"started_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count()}};
  p->reporter = client.system().spawn(supervision_reporter, p->root, env.gcs,
                                      std::move(key), std::move(about));
  return supervisor{std::move(p)};
}

supervisor::~supervisor() {
  if (impl_ && prism::is_initialized())
    stop();
}

std::vector<child_info> supervisor::which_children() const {
  std::vector<child_info> result;
  if (!impl_ || !impl_->root)
    return result;
  caf::scoped_actor self{*impl_->sys};
  self->request(impl_->root, control_timeout, protocol::which_children{})
      .receive([&](std::vector<child_info>& xs) { result = std::move(xs); },
               [](caf::error&) {});
  return result;
}

bool supervisor::alive() const {
  if (!impl_ || !impl_->root)
    return false;
  caf::scoped_actor self{*impl_->sys};
  bool ok = false;
  self->request(impl_->root, control_timeout, protocol::which_children{})
      .receive([&](std::vector<child_info>&) { ok = true; },
               [](caf::error&) {});
  return ok;
}

namespace {

template <class Request, class OnDone>
void command(const supervisor::impl* p, Request req, const char* what,
             OnDone on_done) {
  if (p == nullptr || !p->root)
    throw invalid_argument_error(std::string{what} + ": the tree is stopped");
  caf::scoped_actor self{*p->sys};
  std::string failure;
  self->request(p->root, control_timeout, std::move(req))
      .receive(on_done,
               [&](caf::error& err) { failure = p->sys->render(err); });
  if (!failure.empty())
    throw invalid_argument_error(std::string{what} + ": " + failure);
}

} // namespace

void supervisor::start_child(const std::string& id) {
  command(impl_.get(), protocol::start_child{id}, "start_child",
          [](caf::actor&) {});
}

void supervisor::terminate_child(const std::string& id) {
  command(impl_.get(), protocol::terminate_child{id}, "terminate_child", [] {});
}

void supervisor::stop() {
  if (!impl_ || !impl_->root)
    return;
  caf::scoped_actor self{*impl_->sys};
  self->monitor(impl_->root);
  if (impl_->reporter)
    self->monitor(impl_->reporter);
  self->send_exit(impl_->root, caf::exit_reason::user_shutdown);
  self->receive([](const caf::down_msg&) {},
                caf::after(std::chrono::seconds{60}) >> [] {});
  // The reporter removes the tree's entry once the root is down.
  if (impl_->reporter)
    self->receive([](const caf::down_msg&) {},
                  caf::after(report_timeout + std::chrono::seconds{1}) >>
                      [] {});
  impl_->root = nullptr;
  impl_->reporter = nullptr;
}

} // namespace prism
