// The autoscaler's configuration file: a full one is read as written,
// defaults fill the rest, and every mistake is refused naming its field.

#include <boost/test/unit_test.hpp>

#include <string>

#include "prism/error.hpp"
#include "prism/internal/autoscaler_config.hpp"

namespace autoscaler_config_test {

using namespace std::chrono_literals;
using prism::internal::parse_autoscaler_config;

namespace {

/// The error message `text` is refused with, or "accepted".
std::string refusal(const std::string& text) {
  try {
    parse_autoscaler_config(text);
    return "accepted";
  } catch (const prism::invalid_argument_error& e) {
    return e.what();
  }
}

bool refused_naming(const std::string& text, const std::string& field) {
  auto why = refusal(text);
  return why != "accepted" && why.find(field) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_SUITE(autoscaler_configuration)

BOOST_AUTO_TEST_CASE(a_full_file_is_read_as_written) {
  auto cfg = parse_autoscaler_config(R"({
    "node_types": {
      "cpu8": {"resources": {"CPU": 8, "memory": 3.2e10},
               "min_workers": 1, "max_workers": 6},
      "gpu": {"resources": {"CPU": 8, "GPU": 1}, "max_workers": 2}
    },
    "max_workers": 7,
    "idle_timeout_s": 30,
    "max_pending": 4,
    "queued_timeout_s": 120,
    "request_timeout_s": 20,
    "max_launch_attempts": 5,
    "join_timeout_s": 90,
    "stop_timeout_s": 45,
    "missed_listings": 4,
    "gone_grace_s": 15,
    "backoff_min_s": 1,
    "backoff_max_s": 60,
    "interval_s": 0.5,
    "provider": {"type": "local", "max_nodes_per_host": 4}
  })");
  BOOST_TEST(cfg.node_types.size() == 2u);
  BOOST_TEST(cfg.type("cpu8")->resources.at("CPU") == 8);
  BOOST_TEST(cfg.type("cpu8")->min_workers == 1);
  BOOST_TEST(cfg.type("gpu")->max_workers == 2);
  BOOST_TEST(cfg.type("gpu")->min_workers == 0);
  BOOST_TEST(cfg.max_workers == 7);
  BOOST_TEST((cfg.idle_timeout == 30s));
  BOOST_TEST(cfg.max_pending == 4);
  BOOST_TEST((cfg.request_timeout == 20s));
  BOOST_TEST(cfg.max_launch_attempts == 5);
  BOOST_TEST((cfg.join_timeout == 90s));
  BOOST_TEST((cfg.stop_timeout == 45s));
  BOOST_TEST(cfg.missed_listings == 4);
  BOOST_TEST((cfg.gone_grace == 15s));
  BOOST_TEST((cfg.type_backoff.min == 1s));
  BOOST_TEST((cfg.type_backoff.max == 60s));
  BOOST_TEST((cfg.interval == 500ms));
  BOOST_TEST(cfg.provider == "local");
  BOOST_TEST(cfg.provider_options.at("max_nodes_per_host") == "4");
}

BOOST_AUTO_TEST_CASE(defaults_fill_what_is_left_out) {
  auto cfg = parse_autoscaler_config(
      R"({"node_types": {"w": {"resources": {"CPU": 2}}}})");
  BOOST_TEST(cfg.type("w")->max_workers == 10);
  BOOST_TEST(cfg.max_workers == 100);
  BOOST_TEST((cfg.idle_timeout == 60s));
  BOOST_TEST(cfg.provider == "local");
}

BOOST_AUTO_TEST_CASE(mistakes_are_refused_naming_their_field) {
  BOOST_TEST(refused_naming("{", "not valid JSON"));
  BOOST_TEST(refused_naming("[]", "must be an object"));
  BOOST_TEST(refused_naming("{}", "node_types"));
  BOOST_TEST(refused_naming(R"({"node_types": {}})", "node_types"));
  BOOST_TEST(refused_naming(
      R"({"node_types": {"w": {"resources": {"CPU": 2}}}, "idle_timout_s": 5})",
      "idle_timout_s: unknown field"));
  BOOST_TEST(refused_naming(
      R"({"node_types": {"w": {"resources": {"CPU": 2}, "max": 3}}})",
      "node_types.w.max: unknown field"));
  BOOST_TEST(
      refused_naming(R"({"node_types": {"w": {"resources": {"CPU": -1}}}})",
                     "node_types.w.resources.CPU"));
  BOOST_TEST(
      refused_naming(R"({"node_types": {"w": {}}})", "node_types.w.resources"));
  BOOST_TEST(refused_naming(
      R"({"node_types": {"w": {"resources": {"CPU": 2}, "min_workers": 3, "max_workers": 2}}})",
      "min_workers is above max_workers"));
  BOOST_TEST(refused_naming(
      R"({"node_types": {"w": {"resources": {"CPU": 2}, "max_workers": 1.5}}})",
      "node_types.w.max_workers"));
  BOOST_TEST(refused_naming(
      R"({"node_types": {"w x": {"resources": {"CPU": 2}}}})", "w x"));
  BOOST_TEST(refused_naming(
      R"({"node_types": {"w": {"resources": {"CPU": 2}}}, "idle_timeout_s": "1m"})",
      "idle_timeout_s"));
  BOOST_TEST(refused_naming(
      R"({"node_types": {"w": {"resources": {"CPU": 2}}}, "max_pending": 0})",
      "max_pending"));
  BOOST_TEST(refused_naming(
      R"({"node_types": {"w": {"resources": {"CPU": 2}}}, "provider": 3})",
      "provider"));
}

BOOST_AUTO_TEST_CASE(an_unreadable_file_is_refused_naming_it) {
  try {
    prism::internal::load_autoscaler_config("/nonexistent/autoscaler.json");
    BOOST_FAIL("accepted");
  } catch (const prism::invalid_argument_error& e) {
    BOOST_TEST(std::string{e.what()}.find("/nonexistent/autoscaler.json") !=
               std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace autoscaler_config_test
