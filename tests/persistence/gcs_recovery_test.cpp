// What a control store that starts on its storage makes of the actors it
// finds there.

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>

#include "gcs_fixture.hpp"
#include "test_support.hpp"

namespace gcs_recovery_test {

using namespace prism;
using namespace prism::persistence;
using namespace prism::persistence::testing;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(gcs_recovery)

BOOST_AUTO_TEST_CASE(an_unreadable_creation_spec_is_written_back_as_it_was) {
  // A live actor whose creation spec does not decode is marked dead, and
  // its record keeps the spec's bytes: the control store writes back what
  // it could not read, not the little of it that it understood.
  const std::string garbage = std::string{"\x07not a creation spec"} + '\0';
  auto id = sample_actor_id(1);
  gcs_on_failing_disk gcs{10s, [&](const std::string& path) {
                            auto store = control_store::open(options_for(path));
                            auto a = sample_actor(1);
                            a.state = actor_state::alive;
                            a.creation_spec = garbage;
                            store.put_actor(a);
                            store.close();
                          }};
  gcs.close();
  auto store = control_store::open(options_for(gcs.dir().path()));
  auto got = store.get_actor(id);
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST((got->state == actor_state::dead));
  BOOST_TEST(got->death_cause.find("unreadable") != std::string::npos,
             got->death_cause);
  BOOST_TEST(got->creation_spec == garbage);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace gcs_recovery_test
