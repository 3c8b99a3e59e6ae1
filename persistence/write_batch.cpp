#include "write_batch.hpp"

#include <vector>

#include "record_codec.hpp"
#include "store_layout.hpp"
#include "write_batch_rep.hpp"

namespace prism::persistence {

using layout::table;

write_batch::write_batch() : rep_(std::make_unique<rep>()) {}

write_batch::write_batch(write_batch&&) noexcept = default;

write_batch& write_batch::operator=(write_batch&&) noexcept = default;

write_batch::~write_batch() = default;

void write_batch::put_job(const job_record& r) {
  rep_->ops.push_back(
      {table::jobs, false, layout::job_key(r.job), codec::encode(r)});
}

void write_batch::del_job(job_id id) {
  rep_->ops.push_back({table::jobs, true, layout::job_key(id), {}});
}

void write_batch::put_node(const node_record& r) {
  rep_->ops.push_back(
      {table::nodes, false, layout::id_key(r.node), codec::encode(r)});
}

void write_batch::del_node(node_id id) {
  rep_->ops.push_back({table::nodes, true, layout::id_key(id), {}});
}

void write_batch::put_actor(const actor_record& r) {
  rep_->ops.push_back(
      {table::actors, false, layout::id_key(r.actor), codec::encode(r)});
}

void write_batch::put_actor_started(actor_id id, node_id node) {
  rep_->ops.push_back({table::actors, false, layout::id_key(id),
                       codec::encode_actor_started(node), true});
}

void write_batch::del_actor(actor_id id) {
  rep_->ops.push_back({table::actors, true, layout::id_key(id), {}});
}

void write_batch::put_named_actor(const std::string& ns,
                                  const std::string& name, actor_id actor) {
  rep_->ops.push_back({table::named_actors, false, layout::scoped_key(ns, name),
                       codec::encode_named_actor(actor)});
}

void write_batch::del_named_actor(const std::string& ns,
                                  const std::string& name) {
  rep_->ops.push_back(
      {table::named_actors, true, layout::scoped_key(ns, name), {}});
}

void write_batch::kv_put(const std::string& ns, const std::string& key,
                         const std::string& value) {
  rep_->ops.push_back({table::kv, false, layout::scoped_key(ns, key), value});
}

void write_batch::put_lineage(const lineage_record& r) {
  rep_->ops.push_back({table::lineage, false,
                       layout::lineage_key(r.job, r.object), codec::encode(r)});
}

void write_batch::del_lineage(job_id job, const object_id& object) {
  rep_->ops.push_back(
      {table::lineage, true, layout::lineage_key(job, object), {}});
}

void write_batch::kv_del(const std::string& ns, const std::string& key) {
  rep_->ops.push_back({table::kv, true, layout::scoped_key(ns, key), {}});
}

void write_batch::put_applied_request(const applied_request& r) {
  rep_->ops.push_back(
      {table::requests, false, layout::order_key(r.order),
       layout::applied_request_value(r.client, r.seq, r.result)});
}

void write_batch::del_applied_request(std::uint64_t order) {
  rep_->ops.push_back({table::requests, true, layout::order_key(order), {}});
}

void write_batch::append(write_batch&& other) {
  if (!other.rep_ || other.rep_.get() == rep_.get())
    return;
  if (!rep_)
    rep_ = std::make_unique<rep>();
  auto& ops = other.rep_->ops;
  rep_->ops.insert(rep_->ops.end(), std::make_move_iterator(ops.begin()),
                   std::make_move_iterator(ops.end()));
  ops.clear();
}

std::size_t write_batch::size() const noexcept {
  return rep_ ? rep_->ops.size() : 0;
}

void write_batch::clear() {
  if (rep_)
    rep_->ops.clear();
  else
    rep_ = std::make_unique<rep>();
}

} // namespace prism::persistence
