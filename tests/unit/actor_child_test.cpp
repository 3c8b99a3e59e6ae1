// The stand-in a supervisor watches for a Prism actor, against a fake control
// store on CAF's deterministic test scheduler: it has started once the actor
// is alive, and its exit is normal only if the control store says the actor
// called exit_actor, whatever the words of the death cause.

#include <boost/test/unit_test.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "deterministic_system.hpp"
#include "protocol/owner_gcs.hpp"
#include "protocol/supervisor.hpp"
#include "supervisor/actor_child.hpp"

namespace actor_child_test {

namespace {

using namespace prism;

/// The words the control store once used for an actor that called
/// `exit_actor`, and that the stand-in used to look for.
const std::string exit_actor_words = "the actor exited by calling exit_actor";

// What the fake control store was asked.
struct gcs_journal {
  std::vector<protocol::create_actor> creates;
  std::vector<actor_id> kills;
};

// Accepts every actor; records creations and kills.
caf::behavior fake_gcs(caf::event_based_actor*,
                       std::shared_ptr<gcs_journal> j) {
  return {
      [j](protocol::create_actor& msg) {
        j->creates.push_back(msg);
        return detail::error_info{};
      },
      [j](const protocol::kill_actor& msg) {
        j->kills.push_back(msg.actor);
        return true;
      },
  };
}

struct actor_child_fixture : prism_unit::deterministic_system {
  actor_child_fixture() : gcs(sys.spawn(fake_gcs, journal)) {
    spec.id = actor_id{unique_id::random()};
    spec.name = "child";
    spec.factory = "some_factory";
    child = actors::spawn_actor_child(sys, spec, gcs);
    caf::actor_cast<caf::abstract_actor*>(child)->attach_functor(
        [reason = exit_reason](const caf::error& x) { *reason = x; });
    drain();
  }

  ~actor_child_fixture() {
    caf::anon_send_exit(child, caf::exit_reason::kill);
    caf::anon_send_exit(gcs, caf::exit_reason::kill);
    fire_remaining_timers();
  }

  /// Tells the stand-in, as the control store would, that its actor is now
  /// in `state`.
  void update(internal::actor_state state,
              internal::death_kind kind = internal::death_kind::none,
              std::string cause = "") {
    protocol::actor_update u;
    u.actor = spec.id;
    u.state = state;
    u.death_kind = kind;
    u.death_cause = std::move(cause);
    caf::anon_send(child, u);
    drain();
  }

  /// Asks the stand-in whether it has started; the reply, once there is one.
  std::shared_ptr<std::optional<caf::error>> await_started() {
    auto result = std::make_shared<std::optional<caf::error>>();
    sys.spawn(
        [to = child, result](caf::event_based_actor* client, int) {
          client->request(to, caf::infinite, protocol::await_started{})
              .then([result]() { *result = caf::error{}; },
                    [result](caf::error& err) { *result = std::move(err); });
        },
        0);
    drain();
    return result;
  }

  std::shared_ptr<gcs_journal> journal = std::make_shared<gcs_journal>();
  caf::actor gcs;
  internal::actor_spec spec;
  caf::actor child;
  std::shared_ptr<std::optional<caf::error>> exit_reason =
      std::make_shared<std::optional<caf::error>>();
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(actor_child_test, actor_child_fixture)

BOOST_AUTO_TEST_CASE(stand_in_creates_its_actor_as_owner) {
  BOOST_REQUIRE(journal->creates.size() == 1u);
  BOOST_TEST((journal->creates[0].spec.id == spec.id));
  BOOST_TEST((journal->creates[0].owner == child));
}

BOOST_AUTO_TEST_CASE(stand_in_has_started_only_once_its_actor_is_alive) {
  auto reply = await_started();
  BOOST_TEST(!reply->has_value());
  update(internal::actor_state::pending);
  BOOST_TEST(!reply->has_value());
  update(internal::actor_state::alive);
  BOOST_REQUIRE(reply->has_value());
  BOOST_TEST(!**reply);
  // Asked again, it answers at once.
  auto again = await_started();
  BOOST_REQUIRE(again->has_value());
  BOOST_TEST(!**again);
}

BOOST_AUTO_TEST_CASE(actor_dead_before_it_was_alive_fails_the_start) {
  auto reply = await_started();
  update(internal::actor_state::dead, internal::death_kind::constructor_failed,
         "its factory threw");
  BOOST_REQUIRE(reply->has_value());
  BOOST_TEST((**reply ==
              protocol::make_error(protocol::supervisor_errc::start_failed)));
  BOOST_REQUIRE(exit_reason->has_value());
  BOOST_TEST(static_cast<bool>(**exit_reason));
}

BOOST_AUTO_TEST_CASE(actor_that_called_exit_actor_ends_the_stand_in_normally) {
  update(internal::actor_state::alive);
  update(internal::actor_state::dead, internal::death_kind::exited,
         "any words at all");
  BOOST_REQUIRE(exit_reason->has_value());
  BOOST_TEST(!**exit_reason);
}

BOOST_AUTO_TEST_CASE(cause_that_reads_like_exit_actor_is_no_normal_exit) {
  update(internal::actor_state::alive);
  // A constructor or method may throw with any message, this one included.
  update(internal::actor_state::dead, internal::death_kind::constructor_failed,
         exit_actor_words);
  BOOST_REQUIRE(exit_reason->has_value());
  BOOST_TEST(static_cast<bool>(**exit_reason));
  BOOST_TEST(sys.render(**exit_reason).find(exit_actor_words) !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(killed_actor_ends_the_stand_in_abnormally) {
  update(internal::actor_state::alive);
  update(internal::actor_state::dead, internal::death_kind::killed,
         exit_actor_words);
  BOOST_REQUIRE(exit_reason->has_value());
  BOOST_TEST(static_cast<bool>(**exit_reason));
}

BOOST_AUTO_TEST_CASE(stand_in_asked_to_stop_kills_its_actor) {
  update(internal::actor_state::alive);
  caf::anon_send_exit(child, caf::exit_reason::user_shutdown);
  drain();
  BOOST_REQUIRE(journal->kills.size() == 1u);
  BOOST_TEST((journal->kills[0] == spec.id));
  BOOST_REQUIRE(exit_reason->has_value());
  BOOST_TEST((**exit_reason == caf::exit_reason::user_shutdown));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace actor_child_test
