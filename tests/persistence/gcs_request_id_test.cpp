// Writes to the control store carry request ids: the same write arriving
// again is applied once and answered as the first time, also when a control
// store that restarted gets it, and when the disk refused it the first time.

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <tuple>

#include "gcs_fixture.hpp"
#include "prism/error.hpp"
#include "protocol/kv.hpp"
#include "test_support.hpp"

namespace gcs_request_id_test {

using namespace prism;
using namespace prism::persistence::testing;
using namespace std::chrono_literals;

namespace {

const std::string ns = "request-ids";

/// The request ids of one made-up client.
protocol::request_id request(std::uint64_t seq) {
  static const unique_id client = unique_id::random();
  return protocol::request_id{client, seq};
}

/// The control store over a disk that fails on demand, written to as a
/// client writes.
struct gcs_on_disk : gcs_on_failing_disk {
  gcs_on_disk() : gcs_on_failing_disk(10s) {}

  /// Sends `msg` as a client does (`ask_gcs`) and returns the answer.
  template <class Msg>
  bool send(const Msg& msg) {
    return ask<bool>(msg, "test write");
  }

  std::optional<std::string> get(const std::string& key) {
    auto r = ask<protocol::kv_value>(protocol::kv_get{ns, key}, "test read");
    if (!r.found)
      return std::nullopt;
    return r.value;
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(gcs_request_ids)

BOOST_AUTO_TEST_CASE(the_same_write_twice_is_applied_once_and_answered_alike) {
  gcs_on_disk gcs;
  protocol::kv_put claim{ns, "leader", "a", false, request(1)};
  BOOST_TEST(!gcs.send(claim));
  BOOST_TEST(!gcs.send(claim));
  protocol::kv_del drop{ns, "leader", request(2)};
  BOOST_TEST(gcs.send(drop));
  BOOST_TEST(gcs.send(drop));
  // The claim arriving late again does not set the key a second time.
  BOOST_TEST(!gcs.send(claim));
  BOOST_TEST(!gcs.get("leader").has_value());
  // A write with a new id is applied.
  BOOST_TEST(!gcs.send(protocol::kv_put{ns, "leader", "b", false, request(3)}));
  BOOST_TEST((gcs.get("leader") == "b"));
}

BOOST_AUTO_TEST_CASE(a_write_sent_again_across_a_restart_is_applied_once) {
  gcs_on_disk gcs;
  protocol::kv_put claim{ns, "leader", "a", false, request(1)};
  protocol::kv_del drop{ns, "other", request(2)};
  BOOST_TEST(!gcs.send(claim));
  BOOST_TEST(!gcs.send(protocol::kv_put{ns, "other", "x", true, request(3)}));
  BOOST_TEST(gcs.send(drop));
  gcs.stop();
  // Sent while the control store is down: the endpoint holds them and hands
  // them to the new one, which knows their ids from the disk.
  auto claim_again =
      std::async(std::launch::async, [&] { return gcs.send(claim); });
  auto drop_again =
      std::async(std::launch::async, [&] { return gcs.send(drop); });
  gcs.start();
  BOOST_TEST(!claim_again.get());
  BOOST_TEST(drop_again.get());
  BOOST_TEST((gcs.get("leader") == "a"));
  BOOST_TEST(!gcs.get("other").has_value());
}

BOOST_AUTO_TEST_CASE(a_write_the_disk_refused_and_sent_again_is_applied_once) {
  gcs_on_disk gcs;
  protocol::kv_put claim{ns, "leader", "a", false, request(1)};
  gcs.disk().fail_syncs = true;
  try {
    gcs.send(claim);
    BOOST_FAIL("a write the disk refused was acknowledged");
  } catch (const gcs_unavailable_error& e) {
    BOOST_TEST_MESSAGE("refused: " << e.what());
    BOOST_TEST(std::string{e.what()}.find("may or may not have been applied") !=
               std::string::npos);
  }
  gcs.disk().fail_syncs = false;
  // Whether or not the refused write reached the disk, its id went with it:
  // sent again, it is applied once, and answered as a first write.
  BOOST_TEST(!gcs.send(claim));
  BOOST_TEST(!gcs.send(claim));
  BOOST_TEST((gcs.get("leader") == "a"));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace gcs_request_id_test
