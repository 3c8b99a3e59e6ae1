#include "gcs/actor_record.hpp"

#include <cstddef>
#include <exception>
#include <memory>

#include <caf/binary_serializer.hpp>

#include "prism/detail/value.hpp"

namespace prism::actors::gcs_detail {

namespace {

/// The most room for a spec's bytes a thread keeps between specs.
constexpr std::size_t kept_spec_buffer = std::size_t{64} << 10;

} // namespace

persistence::actor_state to_record(actor_state s) {
  switch (s) {
  case actor_state::pending:
    return persistence::actor_state::pending;
  case actor_state::alive:
    return persistence::actor_state::alive;
  case actor_state::restarting:
    return persistence::actor_state::restarting;
  case actor_state::dead:
    return persistence::actor_state::dead;
  }
  return persistence::actor_state::dead;
}

actor_state from_record(persistence::actor_state s) {
  switch (s) {
  case persistence::actor_state::pending:
    return actor_state::pending;
  case persistence::actor_state::alive:
    return actor_state::alive;
  case persistence::actor_state::restarting:
    return actor_state::restarting;
  case persistence::actor_state::dead:
    return actor_state::dead;
  }
  return actor_state::dead;
}

// The two enums list the same kinds in the same order, so a cast converts:
// every kind is checked, not just the last.
static_assert([] {
  using p = persistence::death_kind;
  using i = internal::death_kind;
  auto same = [](p a, i b) {
    return static_cast<int>(a) == static_cast<int>(b);
  };
  return same(p::none, i::none) && same(p::exited, i::exited) &&
         same(p::killed, i::killed) &&
         same(p::constructor_failed, i::constructor_failed) &&
         same(p::out_of_restarts, i::out_of_restarts) &&
         same(p::owner_died, i::owner_died) &&
         same(p::job_ended, i::job_ended) && same(p::lost, i::lost);
}());

persistence::death_kind to_record(internal::death_kind k) {
  return static_cast<persistence::death_kind>(k);
}

internal::death_kind from_record(persistence::death_kind k) {
  return static_cast<internal::death_kind>(k);
}

std::string encode_spec(const internal::actor_spec& spec) {
  // Written into a buffer this thread keeps (unless a spec made it large),
  // and with no capture of the refs among its arguments: the record keeps
  // their ids, and keeps nothing alive.
  thread_local detail::byte_buffer buf;
  buf.clear();
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), buf};
  if (sink(const_cast<internal::actor_spec&>(spec)))
    detail::throw_serialization_failure(
        "cannot serialize", detail::type_tag<internal::actor_spec>());
  std::string bytes{buf.begin(), buf.end()};
  if (buf.capacity() > kept_spec_buffer)
    detail::byte_buffer{}.swap(buf);
  return bytes;
}

std::optional<internal::actor_spec> decode_spec(const std::string& bytes) {
  auto decode =
      [](detail::byte_buffer buf) -> std::optional<internal::actor_spec> {
    detail::value v{detail::type_tag<internal::actor_spec>(),
                    std::make_shared<detail::byte_buffer>(std::move(buf)),
                    {}};
    try {
      return detail::decode<internal::actor_spec>(v, "creation spec");
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
  detail::byte_buffer buf{bytes.begin(), bytes.end()};
  if (auto spec = decode(buf))
    return spec;
  // A spec stored before its last fields were written ends before them:
  // read as a spec with their defaults, each a zero byte (no
  // `concurrency_groups`, and before that, no `shared_host`).
  for (int missing = 1; missing <= 2; ++missing) {
    buf.push_back(0);
    if (auto spec = decode(buf))
      return spec;
  }
  return std::nullopt;
}

persistence::actor_record record_of(const actor_entry& a) {
  persistence::actor_record r;
  r.actor = a.spec.id;
  r.job = a.spec.job;
  r.name = a.spec.name;
  r.ns = a.spec.ns;
  r.detached = a.spec.detached;
  r.max_restarts = a.spec.max_restarts;
  r.num_restarts = a.incarnation;
  r.state = to_record(a.state);
  r.death_cause = a.death_cause;
  r.death_kind = to_record(a.death_kind);
  r.node = a.node;
  r.owner = a.spec.owner;
  const auto* extras = a.extras.get();
  r.creation_spec = extras && extras->unreadable_spec ? *extras->unreadable_spec
                                                      : encode_spec(a.spec);
  if (extras)
    r.restarts.assign(extras->restarts.begin(), extras->restarts.end());
  return r;
}

} // namespace prism::actors::gcs_detail
