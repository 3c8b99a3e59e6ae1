#include "recovery.hpp"

#include <map>
#include <unordered_map>
#include <utility>

#include "record_codec.hpp"
#include "store_log.hpp"

namespace prism::persistence {

namespace {

using layout::table;

/// Builds the plan, one table at a time. Actors come before the name index,
/// which is checked against them.
class planner {
public:
  explicit planner(raw_tables& raw) : raw_(raw), log_(store_log()) {}

  recovery_plan run() {
    jobs();
    nodes();
    actors();
    named_actors();
    reindex_names();
    kv();
    lineage();
    requests();
    return std::move(plan_);
  }

private:
  // -- bookkeeping ------------------------------------------------------------

  /// A name-index key in printable form, "ns/name".
  static std::string show(const std::string& ns, const std::string& name) {
    return layout::printable(ns) + "/" + layout::printable(name);
  }

  void note(table t, const std::string& key, repair::action what,
            std::string reason) {
    log_->warn("recovery: {} {} {}: {}", to_string(what), layout::name(t), key,
               reason);
    plan_.result.report.repairs.push_back(
        {layout::name(t), key, what, std::move(reason)});
  }

  void drop(table t, const raw_record& r, const std::string& key,
            std::string reason) {
    note(t, key, repair::action::dropped, std::move(reason));
    plan_.writes.push_back({t, true, r.key, {}});
  }

  void rewrite(table t, std::string raw_key, const std::string& key,
               std::string value, std::string reason) {
    note(t, key, repair::action::fixed, std::move(reason));
    plan_.writes.push_back({t, false, std::move(raw_key), std::move(value)});
  }

  auto& rows(table t) {
    return raw_[static_cast<std::size_t>(t)];
  }

  // -- tables -----------------------------------------------------------------

  void jobs() {
    for (auto& r : rows(table::jobs)) {
      job_id key;
      if (!layout::parse_job_key(r.key, key)) {
        drop(table::jobs, r, layout::printable(r.key), "malformed key");
        continue;
      }
      job_record rec;
      std::string why;
      if (codec::decode(r.value, rec, why) != codec::decoded::ok) {
        drop(table::jobs, r, std::to_string(key.value), why);
      } else if (rec.job != key) {
        drop(table::jobs, r, std::to_string(key.value),
             "record names job " + std::to_string(rec.job.value));
      } else {
        plan_.result.tables.jobs.push_back(std::move(rec));
      }
    }
  }

  void nodes() {
    for (auto& r : rows(table::nodes)) {
      unique_id key;
      if (!layout::parse_id_key(r.key, key)) {
        drop(table::nodes, r, layout::printable(r.key), "malformed key");
        continue;
      }
      node_record rec;
      std::string why;
      if (codec::decode(r.value, rec, why) != codec::decoded::ok) {
        drop(table::nodes, r, key.hex(), why);
      } else if (rec.node != key) {
        drop(table::nodes, r, key.hex(), "record names node " + rec.node.hex());
      } else {
        plan_.result.tables.nodes.push_back(std::move(rec));
      }
    }
  }

  void actors() {
    auto& out = plan_.result.tables.actors;
    out.reserve(rows(table::actors).size());
    actor_index_.reserve(rows(table::actors).size());
    for (auto& r : rows(table::actors)) {
      unique_id key;
      if (!layout::parse_id_key(r.key, key)) {
        drop(table::actors, r, layout::printable(r.key), "malformed key");
        continue;
      }
      actor_record rec;
      std::string why;
      auto result = codec::decode(r.value, rec, why);
      if (result == codec::decoded::malformed) {
        drop(table::actors, r, key.hex(), why);
        continue;
      }
      if (rec.actor != key) {
        drop(table::actors, r, key.hex(),
             "record names actor " + rec.actor.hex());
        continue;
      }
      bool changed = result == codec::decoded::repaired;
      if (rec.state != actor_state::dead && rec.creation_spec.empty()) {
        rec.state = actor_state::dead;
        rec.death_cause = "the control store held no creation spec for it";
        why = "live actor without creation spec marked dead";
        changed = true;
      }
      if (changed)
        rewrite(table::actors, r.key, key.hex(), codec::encode(rec), why);
      actor_index_.emplace(rec.actor, out.size());
      out.push_back(std::move(rec));
    }
  }

  void named_actors() {
    for (auto& r : rows(table::named_actors)) {
      named_actor_entry entry;
      if (!layout::parse_scoped_key(r.key, entry.ns, entry.name)) {
        drop(table::named_actors, r, layout::printable(r.key), "malformed key");
        continue;
      }
      auto shown = [&] { return show(entry.ns, entry.name); };
      std::string why;
      if (codec::decode_named_actor(r.value, entry.actor, why) !=
          codec::decoded::ok) {
        drop(table::named_actors, r, shown(), why);
        continue;
      }
      auto i = actor_index_.find(entry.actor);
      if (i == actor_index_.end()) {
        drop(table::named_actors, r, shown(),
             "actor " + entry.actor.hex() + " is missing");
        continue;
      }
      const auto& actor = plan_.result.tables.actors[i->second];
      if (actor.state == actor_state::dead) {
        drop(table::named_actors, r, shown(),
             "actor " + entry.actor.hex() + " is dead");
      } else if (actor.ns != entry.ns || actor.name != entry.name) {
        drop(table::named_actors, r, shown(),
             "actor " + entry.actor.hex() + " is named '" +
                 show(actor.ns, actor.name) + "'");
      } else {
        names_.emplace(std::pair{entry.ns, entry.name}, entry.actor);
        plan_.result.tables.named_actors.push_back(std::move(entry));
      }
    }
  }

  /// Gives every live named actor its index entry back.
  void reindex_names() {
    for (const auto& actor : plan_.result.tables.actors) {
      if (actor.name.empty() || actor.state == actor_state::dead)
        continue;
      auto [i, added] =
          names_.emplace(std::pair{actor.ns, actor.name}, actor.actor);
      if (added) {
        rewrite(table::named_actors, layout::scoped_key(actor.ns, actor.name),
                show(actor.ns, actor.name),
                codec::encode_named_actor(actor.actor),
                "index entry of actor " + actor.actor.hex() + " re-added");
        plan_.result.tables.named_actors.push_back(
            {actor.ns, actor.name, actor.actor});
      } else if (i->second != actor.actor) {
        note(table::named_actors, show(actor.ns, actor.name),
             repair::action::kept,
             "also claimed by live actor " + actor.actor.hex() +
                 "; the index keeps " + i->second.hex());
      }
    }
  }

  void kv() {
    for (auto& r : rows(table::kv)) {
      kv_entry entry;
      if (!layout::parse_scoped_key(r.key, entry.ns, entry.key)) {
        drop(table::kv, r, layout::printable(r.key), "malformed key");
        continue;
      }
      entry.value = std::move(r.value);
      plan_.result.tables.kv.push_back(std::move(entry));
    }
  }

  void requests() {
    for (auto& r : rows(table::requests)) {
      applied_request entry;
      if (!layout::parse_order_key(r.key, entry.order)) {
        drop(table::requests, r, layout::printable(r.key), "malformed key");
        continue;
      }
      if (!layout::parse_applied_request_value(r.value, entry.client, entry.seq,
                                               entry.result)) {
        drop(table::requests, r, std::to_string(entry.order),
             "malformed value");
        continue;
      }
      plan_.result.tables.requests.push_back(entry);
    }
  }

  void lineage() {
    for (auto& r : rows(table::lineage)) {
      job_id job;
      object_id object;
      if (!layout::parse_lineage_key(r.key, job, object)) {
        drop(table::lineage, r, layout::printable(r.key), "malformed key");
        continue;
      }
      lineage_record rec;
      std::string why;
      if (codec::decode(r.value, rec, why) != codec::decoded::ok) {
        drop(table::lineage, r, object.hex(), why);
      } else if (rec.job != job || rec.object != object) {
        drop(table::lineage, r, object.hex(),
             "record names object " + rec.object.hex() + " of job " +
                 std::to_string(rec.job.value));
      } else {
        plan_.result.tables.lineage.push_back(std::move(rec));
      }
    }
  }

  raw_tables& raw_;
  std::shared_ptr<spdlog::logger> log_;
  recovery_plan plan_;
  std::unordered_map<actor_id, std::size_t> actor_index_;
  std::map<std::pair<std::string, std::string>, actor_id> names_;
};

} // namespace

recovery_plan plan_recovery(raw_tables tables) {
  return planner{tables}.run();
}

} // namespace prism::persistence
