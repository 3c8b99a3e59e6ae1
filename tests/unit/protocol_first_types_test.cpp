// Every message type of the first half of the registry survives CAF's binary
// serializer whole, and its cut or damaged bytes are refused or read, never a
// crash (protocol_samples.hpp).

#include <boost/test/unit_test.hpp>

#include "protocol_samples.hpp"

namespace protocol_first_types_test {

using namespace protocol_samples;

BOOST_FIXTURE_TEST_SUITE(protocol_first_types, actor_system_fixture)

// The samples come from the list that registration walks, so a message type
// cannot be registered without one. Each sample round-trips to the same
// bytes; every prefix of its bytes is refused and damaged copies are read or
// refused, never a crash (the sanitizers watch this test).
BOOST_AUTO_TEST_CASE(every_registered_message_type_roundtrips_its_sample) {
  roundtrip_every_sample<first_message_types>(sys);
}

BOOST_AUTO_TEST_CASE(damaged_bytes_of_every_message_type_are_refused_or_read) {
  read_every_damaged_sample<first_message_types>(sys);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace protocol_first_types_test
