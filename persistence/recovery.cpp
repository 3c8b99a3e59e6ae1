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
  planner(const table_reader& read, std::size_t actors)
      : read_(read), log_(store_log()), expected_actors_(actors) {}

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

  void drop(table t, std::string_view raw_key, const std::string& key,
            std::string reason) {
    note(t, key, repair::action::dropped, std::move(reason));
    plan_.writes.push_back({t, true, std::string{raw_key}, {}});
  }

  void rewrite(table t, std::string raw_key, const std::string& key,
               std::string value, std::string reason) {
    note(t, key, repair::action::fixed, std::move(reason));
    plan_.writes.push_back({t, false, std::move(raw_key), std::move(value)});
  }

  /// Calls `row(key, value)` with each row of table `t`.
  template <class F>
  void each(table t, F&& row) {
    read_(t, row_visitor{std::forward<F>(row)});
  }

  // -- tables -----------------------------------------------------------------

  void jobs() {
    each(table::jobs, [&](std::string_view raw, std::string_view value) {
      job_id key;
      if (!layout::parse_job_key(raw, key)) {
        drop(table::jobs, raw, layout::printable(raw), "malformed key");
        return;
      }
      job_record rec;
      std::string why;
      if (codec::decode(value, rec, why) != codec::decoded::ok) {
        drop(table::jobs, raw, std::to_string(key.value), why);
      } else if (rec.job != key) {
        drop(table::jobs, raw, std::to_string(key.value),
             "record names job " + std::to_string(rec.job.value));
      } else {
        plan_.result.tables.jobs.push_back(std::move(rec));
      }
    });
  }

  void nodes() {
    each(table::nodes, [&](std::string_view raw, std::string_view value) {
      unique_id key;
      if (!layout::parse_id_key(raw, key)) {
        drop(table::nodes, raw, layout::printable(raw), "malformed key");
        return;
      }
      node_record rec;
      std::string why;
      if (codec::decode(value, rec, why) != codec::decoded::ok) {
        drop(table::nodes, raw, key.hex(), why);
      } else if (rec.node != key) {
        drop(table::nodes, raw, key.hex(),
             "record names node " + rec.node.hex());
      } else {
        plan_.result.tables.nodes.push_back(std::move(rec));
      }
    });
  }

  void actors() {
    auto& out = plan_.result.tables.actors;
    out.reserve(expected_actors_);
    actor_index_.reserve(expected_actors_);
    each(table::actors, [&](std::string_view raw, std::string_view value) {
      unique_id key;
      if (!layout::parse_id_key(raw, key)) {
        drop(table::actors, raw, layout::printable(raw), "malformed key");
        return;
      }
      actor_record rec;
      std::string why;
      auto result = codec::decode(value, rec, why);
      if (result == codec::decoded::malformed) {
        drop(table::actors, raw, key.hex(), why);
        return;
      }
      if (rec.actor != key) {
        drop(table::actors, raw, key.hex(),
             "record names actor " + rec.actor.hex());
        return;
      }
      bool changed = result == codec::decoded::repaired;
      if (rec.state != actor_state::dead && rec.creation_spec.empty()) {
        rec.state = actor_state::dead;
        rec.death_cause = "the control store held no creation spec for it";
        why = "live actor without creation spec marked dead";
        changed = true;
      }
      if (changed)
        rewrite(table::actors, std::string{raw}, key.hex(), codec::encode(rec),
                why);
      actor_index_.emplace(rec.actor, out.size());
      out.push_back(std::move(rec));
    });
  }

  void named_actors() {
    each(table::named_actors, [&](std::string_view raw,
                                  std::string_view value) {
      named_actor_entry entry;
      if (!layout::parse_scoped_key(raw, entry.ns, entry.name)) {
        drop(table::named_actors, raw, layout::printable(raw), "malformed key");
        return;
      }
      auto shown = [&] { return show(entry.ns, entry.name); };
      std::string why;
      if (codec::decode_named_actor(value, entry.actor, why) !=
          codec::decoded::ok) {
        drop(table::named_actors, raw, shown(), why);
        return;
      }
      auto i = actor_index_.find(entry.actor);
      if (i == actor_index_.end()) {
        drop(table::named_actors, raw, shown(),
             "actor " + entry.actor.hex() + " is missing");
        return;
      }
      const auto& actor = plan_.result.tables.actors[i->second];
      if (actor.state == actor_state::dead) {
        drop(table::named_actors, raw, shown(),
             "actor " + entry.actor.hex() + " is dead");
      } else if (actor.ns != entry.ns || actor.name != entry.name) {
        drop(table::named_actors, raw, shown(),
             "actor " + entry.actor.hex() + " is named '" +
                 show(actor.ns, actor.name) + "'");
      } else {
        // The index is read in key order: each name goes at the end.
        names_.emplace_hint(names_.end(), std::pair{entry.ns, entry.name},
                            entry.actor);
        plan_.result.tables.named_actors.push_back(std::move(entry));
      }
    });
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
    each(table::kv, [&](std::string_view raw, std::string_view value) {
      kv_entry entry;
      if (!layout::parse_scoped_key(raw, entry.ns, entry.key)) {
        drop(table::kv, raw, layout::printable(raw), "malformed key");
        return;
      }
      entry.value = value;
      plan_.result.tables.kv.push_back(std::move(entry));
    });
  }

  void requests() {
    each(table::requests, [&](std::string_view raw, std::string_view value) {
      applied_request entry;
      if (!layout::parse_order_key(raw, entry.order)) {
        drop(table::requests, raw, layout::printable(raw), "malformed key");
        return;
      }
      if (!layout::parse_applied_request_value(value, entry.client, entry.seq,
                                               entry.result)) {
        drop(table::requests, raw, std::to_string(entry.order),
             "malformed value");
        return;
      }
      plan_.result.tables.requests.push_back(entry);
    });
  }

  void lineage() {
    each(table::lineage, [&](std::string_view raw, std::string_view value) {
      job_id job;
      object_id object;
      if (!layout::parse_lineage_key(raw, job, object)) {
        drop(table::lineage, raw, layout::printable(raw), "malformed key");
        return;
      }
      lineage_record rec;
      std::string why;
      if (codec::decode(value, rec, why) != codec::decoded::ok) {
        drop(table::lineage, raw, object.hex(), why);
      } else if (rec.job != job || rec.object != object) {
        drop(table::lineage, raw, object.hex(),
             "record names object " + rec.object.hex() + " of job " +
                 std::to_string(rec.job.value));
      } else {
        plan_.result.tables.lineage.push_back(std::move(rec));
      }
    });
  }

  const table_reader& read_;
  std::shared_ptr<spdlog::logger> log_;
  std::size_t expected_actors_;
  recovery_plan plan_;
  std::unordered_map<actor_id, std::size_t> actor_index_;
  std::map<std::pair<std::string, std::string>, actor_id> names_;
};

} // namespace

recovery_plan plan_recovery(const table_reader& read, std::size_t actors) {
  return planner{read, actors}.run();
}

} // namespace prism::persistence
