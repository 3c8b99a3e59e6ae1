#include "gcs/kv_table.hpp"

#include <algorithm>

#include <caf/all.hpp>

#include "gcs/gcs_state.hpp"

namespace prism::actors::gcs_detail {

// -- client writes ------------------------------------------------------------

std::optional<bool> applied_answer(const gcs_state& st,
                                   const protocol::request_id& id) {
  if (id.nil())
    return std::nullopt;
  if (auto i = st.kv.applied.find(id); i != st.kv.applied.end())
    return i->second;
  return std::nullopt;
}

namespace {

/// Forgets the oldest applied writes past the bound, in `b` too.
void forget_applied(gcs_state& st, persistence::write_batch& b) {
  auto& kv = st.kv;
  while (kv.applied_order.size() > max_applied_requests) {
    auto& [order, id] = kv.applied_order.front();
    kv.applied.erase(id);
    if (st.durability.storage)
      b.del_applied_request(order);
    kv.applied_order.pop_front();
  }
}

} // namespace

void remember_applied(gcs_state& st, const protocol::request_id& id,
                      bool answer, persistence::write_batch& b) {
  if (id.nil())
    return;
  auto order = st.kv.next_applied++;
  st.kv.applied.emplace(id, answer);
  st.kv.applied_order.emplace_back(order, id);
  if (st.durability.storage)
    b.put_applied_request({order, id.client, id.seq, answer});
  forget_applied(st, b);
}

void recover_applied(gcs_actor* self,
                     const std::vector<persistence::applied_request>& rs) {
  auto& st = self->state;
  for (const auto& r : rs) {
    protocol::request_id id{r.client, r.seq};
    st.kv.applied.emplace(id, r.result);
    st.kv.applied_order.emplace_back(r.order, id);
    st.kv.next_applied = std::max(st.kv.next_applied, r.order + 1);
  }
  persistence::write_batch b;
  forget_applied(st, b);
  commit(self, std::move(b));
}

// -- key-value requests -------------------------------------------------------

caf::response_promise put_value(gcs_actor* self, protocol::kv_put& msg) {
  auto& st = self->state;
  if (auto first = applied_answer(st, msg.request))
    return reply_when_durable(self, caf::make_message(*first));
  auto key = std::make_pair(msg.ns, msg.key);
  auto i = st.kv.values.find(key);
  bool existed = i != st.kv.values.end();
  persistence::write_batch b;
  if (!existed || msg.overwrite) {
    if (st.durability.storage)
      b.kv_put(msg.ns, msg.key, msg.value);
    st.kv.values[std::move(key)] = std::move(msg.value);
  }
  remember_applied(st, msg.request, existed, b);
  commit(self, std::move(b));
  return reply_when_durable(self, caf::make_message(existed));
}

caf::response_promise get_value(gcs_actor* self, const protocol::kv_get& msg) {
  auto& st = self->state.kv;
  protocol::kv_value result;
  if (auto i = st.values.find({msg.ns, msg.key}); i != st.values.end()) {
    result.found = true;
    result.value = i->second;
  }
  return reply_when_durable(self, caf::make_message(result));
}

caf::response_promise delete_value(gcs_actor* self,
                                   const protocol::kv_del& msg) {
  auto& st = self->state;
  if (auto first = applied_answer(st, msg.request))
    return reply_when_durable(self, caf::make_message(*first));
  bool existed = st.kv.values.erase({msg.ns, msg.key}) > 0;
  persistence::write_batch b;
  if (existed && st.durability.storage)
    b.kv_del(msg.ns, msg.key);
  remember_applied(st, msg.request, existed, b);
  commit(self, std::move(b));
  return reply_when_durable(self, caf::make_message(existed));
}

caf::response_promise list_keys(gcs_actor* self, const protocol::kv_keys& msg) {
  std::vector<std::string> result;
  auto& values = self->state.kv.values;
  for (auto i = values.lower_bound({msg.ns, msg.prefix});
       i != values.end() && i->first.first == msg.ns &&
       i->first.second.compare(0, msg.prefix.size(), msg.prefix) == 0;
       ++i)
    result.push_back(i->first.second);
  return reply_when_durable(self, caf::make_message(std::move(result)));
}

} // namespace prism::actors::gcs_detail
