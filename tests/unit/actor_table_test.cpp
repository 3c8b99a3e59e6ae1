// The control store's entries of actors: who is told of an actor's
// changes, and what an entry keeps apart.

#include <boost/test/unit_test.hpp>

#include <caf/all.hpp>

#include "gcs/actor_table.hpp"
#include "protocol_samples.hpp"

namespace actor_table_test {

using prism::actors::gcs_detail::actor_entry;
using prism::actors::gcs_detail::actor_state;
using prism::actors::gcs_detail::add_subscriber;
using prism::actors::gcs_detail::extras_of;
using prism::actors::gcs_detail::host_contact;
using prism::actors::gcs_detail::restore_state;

namespace {

caf::behavior idle_behavior(int) {
  return {[](int) {}};
}

/// An actor that only waits. Spawned with an argument: for a function of
/// none, CAF 0.17 dereferences an empty tuple pointer, which UBSan reports.
caf::actor idle(caf::actor_system& sys) {
  return sys.spawn(idle_behavior, 0);
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(actor_table, protocol_samples::actor_system_fixture)

BOOST_AUTO_TEST_CASE(a_live_actor_keeps_each_subscriber_once) {
  auto owner = idle(sys);
  auto other = idle(sys);
  actor_entry a;
  restore_state(a, actor_state::alive);
  add_subscriber(a, owner);
  add_subscriber(a, other);
  add_subscriber(a, owner);
  BOOST_TEST(a.subscribers.size() == 2u);
  caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(other, caf::exit_reason::user_shutdown);
}

// A dead actor changes no more; whoever asks about it is told once, and
// holding each asker for as long as the actor is remembered would keep
// them (and their processes' proxies) alive for nothing.
BOOST_AUTO_TEST_CASE(a_dead_actor_keeps_no_subscriber) {
  auto asker = idle(sys);
  actor_entry a;
  restore_state(a, actor_state::dead);
  for (int i = 0; i < 3; ++i)
    add_subscriber(a, asker);
  BOOST_TEST(a.subscribers.empty());
  caf::anon_send_exit(asker, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(an_entry_makes_its_extras_only_when_it_has_some) {
  actor_entry a;
  BOOST_TEST(!a.extras);
  BOOST_TEST(host_contact(a).empty());
  extras_of(a).host_contact = "10.0.0.7:4100";
  BOOST_REQUIRE(a.extras);
  BOOST_TEST(host_contact(a) == "10.0.0.7:4100");
  BOOST_TEST(a.extras->restarts.empty());
  BOOST_TEST(!a.extras->unreadable_spec.has_value());
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace actor_table_test
