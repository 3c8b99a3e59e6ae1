// The creation spec of an actor as the control store keeps it: read back
// whole, read from a store written before a field was added, refused when
// it is not a spec.

#include <boost/test/unit_test.hpp>

#include <string>

#include "gcs/actor_record.hpp"
#include "protocol_samples.hpp"

namespace actor_record_test {

using prism::actors::gcs_detail::decode_spec;
using prism::actors::gcs_detail::encode_spec;

BOOST_AUTO_TEST_SUITE(actor_record)

BOOST_AUTO_TEST_CASE(a_stored_spec_reads_back_whole) {
  auto spec = protocol_samples::sample_actor_spec();
  BOOST_REQUIRE(spec.shared_host);
  auto back = decode_spec(encode_spec(spec));
  BOOST_REQUIRE(back.has_value());
  BOOST_TEST((*back == spec));
}

BOOST_AUTO_TEST_CASE(
    a_spec_stored_before_concurrency_groups_reads_as_one_of_none) {
  auto spec = protocol_samples::sample_actor_spec();
  spec.concurrency_groups.clear();
  auto bytes = encode_spec(spec);
  // Written before `concurrency_groups` was: its last byte (an empty
  // list) is missing.
  bytes.pop_back();
  auto back = decode_spec(bytes);
  BOOST_REQUIRE(back.has_value());
  BOOST_TEST(back->concurrency_groups.empty());
  BOOST_TEST((*back == spec));
}

BOOST_AUTO_TEST_CASE(
    a_spec_stored_before_shared_hosts_reads_as_a_process_of_its_own) {
  auto spec = protocol_samples::sample_actor_spec();
  spec.concurrency_groups.clear();
  auto bytes = encode_spec(spec);
  // Written before `shared_host` was: its last two bytes are missing.
  bytes.resize(bytes.size() - 2);
  auto back = decode_spec(bytes);
  BOOST_REQUIRE(back.has_value());
  BOOST_TEST(!back->shared_host);
  back->shared_host = true;
  BOOST_TEST((*back == spec));
}

BOOST_AUTO_TEST_CASE(bytes_that_are_no_spec_are_refused) {
  auto bytes = encode_spec(protocol_samples::sample_actor_spec());
  BOOST_TEST(!decode_spec(bytes.substr(0, bytes.size() / 2)).has_value());
  BOOST_TEST(!decode_spec(bytes + "trailing").has_value());
  BOOST_TEST(!decode_spec("").has_value());
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace actor_record_test
