#pragma once

// A running control store over a file system that fails on demand (see
// `failing_fs`): its endpoint, and the keeper that starts it again whenever
// it stops, as the embedded cluster runs them. For the tests of what the
// control store does when its disk fails or it restarts.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <boost/test/unit_test.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include "gcs/gcs.hpp"
#include "gcs/gcs_client.hpp"
#include "gcs/gcs_storage.hpp"
#include "protocol/gcs_keeper.hpp"
#include "protocol/registration.hpp"
#include "test_support.hpp"

namespace prism::persistence::testing {

class gcs_on_failing_disk {
public:
  /// `wait`: how long requests wait for a control store that is down.
  /// `before_start`, if given, gets the storage's path before the control
  /// store first opens it (to write records there).
  explicit gcs_on_failing_disk(
      std::chrono::milliseconds wait,
      const std::function<void(const std::string&)>& before_start = {})
      : sys_(make_config()) {
    if (before_start)
      before_start(dir_.path());
    actors::set_gcs_wait(wait);
    endpoint_ = actors::spawn_gcs_endpoint(sys_, wait);
    actors::gcs_keeper_config kc;
    kc.endpoint = endpoint_;
    kc.open_storage = [path = dir_.path(), fs = fs_] {
      auto opts = options_for(path);
      opts.file_system = fs;
      return actors::gcs_storage::open(opts);
    };
    kc.recovery_grace = std::chrono::milliseconds{50};
    kc.max_backoff = std::chrono::milliseconds{20};
    keeper_ = actors::spawn_gcs_keeper(sys_, kc, kc.open_storage());
  }

  ~gcs_on_failing_disk() {
    close();
    caf::anon_send_exit(endpoint_, caf::exit_reason::user_shutdown);
    actors::set_gcs_wait(std::chrono::seconds{60});
  }

  gcs_on_failing_disk(const gcs_on_failing_disk&) = delete;
  gcs_on_failing_disk& operator=(const gcs_on_failing_disk&) = delete;

  /// Sends `msg` as a client does (`ask_gcs`) and returns the answer.
  template <class Reply, class Msg>
  Reply ask(const Msg& msg, const std::string& what) {
    return actors::ask_gcs<Reply>(sys_, endpoint_, msg, what);
  }

  /// Stops the control store and closes its storage.
  void close() {
    if (!keeper_)
      return;
    caf::scoped_actor self{sys_};
    self->request(keeper_, timeout, protocol::gcs_close_atom::value)
        .receive([](bool) {},
                 [](caf::error& e) { BOOST_FAIL("close: " << to_string(e)); });
    keeper_ = nullptr;
  }

  /// Kills the control store as a crash would; requests wait meanwhile.
  void stop() {
    caf::scoped_actor self{sys_};
    self->request(keeper_, timeout, protocol::gcs_stop_atom::value)
        .receive([](bool) {},
                 [](caf::error& e) { BOOST_FAIL("stop: " << to_string(e)); });
  }

  /// Starts a control store that recovers from the disk.
  void start() {
    caf::scoped_actor self{sys_};
    self->request(keeper_, timeout, protocol::gcs_start_atom::value)
        .receive(
            [](bool started, const std::string& why) {
              BOOST_REQUIRE_MESSAGE(started, "start: " << why);
            },
            [](caf::error& e) { BOOST_FAIL("start: " << to_string(e)); });
  }

  failing_fs& disk() {
    return *fs_;
  }

  const temp_dir& dir() const {
    return dir_;
  }

private:
  static constexpr std::chrono::seconds timeout{10};

  static caf::actor_system_config& make_config() {
    static caf::actor_system_config cfg = [] {
      caf::actor_system_config c;
      protocol::add_message_types(c);
      return c;
    }();
    return cfg;
  }

  temp_dir dir_;
  std::shared_ptr<failing_fs> fs_ = std::make_shared<failing_fs>();
  caf::actor_system sys_;
  caf::actor endpoint_;
  caf::actor keeper_;
};

} // namespace prism::persistence::testing
