#include "net/transport.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <caf/actor_system_config.hpp>
#include <caf/detail/socket_guard.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/middleman_actor_impl.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/doorman_impl.hpp>
#include <caf/io/network/interfaces.hpp>
#include <caf/scoped_actor.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "common/log.hpp"
#include "net/connection.hpp"
#include "net/tls.hpp"
#include "prism/internal/thread_annotations.hpp"

namespace prism::actors {

namespace {

using net::native_socket;
using net::rw_state;
using clock_type = std::chrono::steady_clock;

// -- accepting
// -----------------------------------------------------------------

class tls_doorman;

/// An accepted connection while its TLS handshake runs. The multiplexer
/// polls it for the handshake alone; the broker sees the connection only
/// once the handshake is done. It deletes itself once out of the loop.
class tls_accept final : public net::event_handler {
public:
  tls_accept(net::default_multiplexer& mpx, native_socket fd, SSL* ssl,
             caf::intrusive_ptr<tls_doorman> door)
      : net::event_handler(mpx, fd), ssl_(ssl), door_(std::move(door)),
        started_(clock_type::now()) {}

  void start() {
    backend().add(net::operation::read, fd(), this);
  }

  clock_type::time_point started() const {
    return started_;
  }

  void handle_event(net::operation op) override {
    if (ended_)
      return;
    if (op == net::operation::propagate_error) {
      end(false);
      return;
    }
    ERR_clear_error();
    int rc = SSL_do_handshake(ssl_.get());
    if (rc == 1) {
      end(true);
      return;
    }
    switch (SSL_get_error(ssl_.get(), rc)) {
    case SSL_ERROR_WANT_READ:
      backend().del(net::operation::write, fd(), this);
      return;
    case SSL_ERROR_WANT_WRITE:
      backend().add(net::operation::write, fd(), this);
      return;
    default: {
      auto peer = net::remote_addr_of_fd(fd());
      component_logger("tls")->warn("refused a connection from {}: {}",
                                    peer ? *peer : std::string{"?"},
                                    tls_failure(ssl_.get(), rc));
    }
      end(false);
    }
  }

  /// Ends the handshake: takes it out of the loop, after which the
  /// connection goes to the broker (`ok`) or is closed.
  void end(bool ok) {
    if (ended_)
      return;
    ended_ = true;
    ok_ = ok;
    backend().del(net::operation::read, fd(), this);
    backend().del(net::operation::write, fd(), this);
    // Runs in the multiplexer's next round, once it applied these changes
    // (an add and a delete of one round cancel out, and then it would call
    // no `removed_from_loop`).
    backend().post([this] { leave(); });
  }

  void removed_from_loop(net::operation) override {}

  void graceful_shutdown() override {
    end(false);
  }

private:
  void leave();

  ssl_ptr ssl_;
  caf::intrusive_ptr<tls_doorman> door_;
  clock_type::time_point started_;
  bool ended_ = false;
  bool ok_ = false;
};

/// A port of the broker that accepts TLS connections only.
class tls_doorman final : public net::doorman_impl {
public:
  tls_doorman(net::default_multiplexer& mpx, native_socket fd,
              std::shared_ptr<const tls_context> ctx, read_limits limits)
      : net::doorman_impl(mpx, fd), ctx_(std::move(ctx)), limits_(limits) {}

  bool new_connection() override {
    if (detached()) {
      net::close_socket(acceptor_.accepted_socket());
      return false;
    }
    auto& mpx = acceptor_.backend();
    auto fd = acceptor_.accepted_socket();
    caf::detail::socket_guard guard{fd};
    net::nonblocking(fd, true);
    end_stale_handshakes();
    SSL* ssl = ctx_->new_session(fd, true);
    if (ssl == nullptr) {
      ERR_clear_error();
      return true; // the guard closes it; the port goes on accepting
    }
    guard.release();
    auto* handshake = new tls_accept(mpx, fd, ssl, this);
    handshakes_.push_back(handshake);
    handshake->start();
    return true;
  }

  void graceful_shutdown() override {
    for (auto* h : handshakes_)
      h->end(false);
    net::doorman_impl::graceful_shutdown();
  }

  /// Gives the broker the connection whose handshake `h` completed.
  void hand_over(native_socket fd, SSL* ssl) {
    auto& mpx = acceptor_.backend();
    auto connection = caf::make_counted<tls_scribe>(mpx, fd, limits_, ssl);
    auto hdl = connection->hdl();
    parent()->add_scribe(std::move(connection));
    doorman::new_connection(&mpx, hdl);
  }

  void forget(tls_accept* h) {
    handshakes_.erase(std::remove(handshakes_.begin(), handshakes_.end(), h),
                      handshakes_.end());
  }

private:
  /// Ends handshakes past their deadline, and the oldest while too many
  /// run: a peer that opens connections and stays silent holds a socket
  /// for a few seconds at most, and never the multiplexer's thread.
  void end_stale_handshakes() {
    auto now = clock_type::now();
    std::size_t live = 0;
    for (auto i = handshakes_.rbegin(); i != handshakes_.rend(); ++i) {
      if (now - (*i)->started() > tls_handshake_timeout ||
          live >= max_tls_handshakes - 1)
        (*i)->end(false);
      else
        ++live;
    }
  }

  std::shared_ptr<const tls_context> ctx_;
  read_limits limits_;
  /// Handshakes under way, oldest first; each removes itself as it leaves.
  std::vector<tls_accept*> handshakes_;
};

void tls_accept::leave() {
  door_->forget(this);
  if (ok_ && !door_->detached()) {
    auto fd = fd_;
    fd_ = net::invalid_native_socket; // the scribe owns it now
    door_->hand_over(fd, ssl_.release());
  }
  delete this; // closes the socket unless handed over
}

/// A plain port of the broker, whose connections are capped.
class plain_doorman final : public net::doorman_impl {
public:
  plain_doorman(net::default_multiplexer& mpx, native_socket fd,
                read_limits limits)
      : net::doorman_impl(mpx, fd), limits_(limits) {}

  bool new_connection() override {
    if (detached()) {
      net::close_socket(acceptor_.accepted_socket());
      return false;
    }
    auto& mpx = acceptor_.backend();
    auto connection = caf::make_counted<plain_scribe>(
        mpx, acceptor_.accepted_socket(), limits_);
    auto hdl = connection->hdl();
    parent()->add_scribe(std::move(connection));
    return doorman::new_connection(&mpx, hdl);
  }

private:
  read_limits limits_;
};

// -- the middleman actor
// -------------------------------------------------------

/// CAF's middleman actor with Prism's connections and ports: TLS if it has
/// a context, plain TCP otherwise.
class prism_middleman final : public caf::io::middleman_actor_impl {
public:
  prism_middleman(caf::actor_config& cfg, caf::actor broker,
                  std::shared_ptr<const tls_context> ctx, read_limits limits)
      : caf::io::middleman_actor_impl(cfg, std::move(broker)),
        ctx_(std::move(ctx)), limits_(limits) {}

  const char* name() const override {
    return "prism.middleman";
  }

protected:
  caf::expected<caf::io::scribe_ptr> connect(const std::string& host,
                                             std::uint16_t port) override {
    auto fd = net::new_tcp_connection(host, port);
    if (!fd)
      return std::move(fd.error());
    caf::detail::socket_guard guard{*fd};
    net::nonblocking(*fd, true);
    if (!ctx_)
      return caf::make_counted<plain_scribe>(mpx(), guard.release(), limits_);
    ssl_ptr ssl{ctx_->new_session(*fd, false)};
    if (!ssl)
      return caf::make_error(caf::sec::cannot_connect_to_node,
                             "cannot set up TLS");
    auto why =
        tls_handshake(ssl.get(), clock_type::now() + tls_handshake_timeout);
    if (!why.empty())
      return caf::make_error(caf::sec::cannot_connect_to_node,
                             "TLS with " + host + ":" + std::to_string(port) +
                                 ": " + why);
    return caf::make_counted<tls_scribe>(mpx(), guard.release(), limits_,
                                         ssl.release());
  }

  caf::expected<caf::io::doorman_ptr> open(std::uint16_t port, const char* addr,
                                           bool reuse) override {
    auto fd = net::new_tcp_acceptor_impl(port, addr, reuse);
    if (!fd)
      return std::move(fd.error());
    if (!ctx_)
      return caf::make_counted<plain_doorman>(mpx(), *fd, limits_);
    return caf::make_counted<tls_doorman>(mpx(), *fd, ctx_, limits_);
  }

private:
  net::default_multiplexer& mpx() {
    return static_cast<net::default_multiplexer&>(
        system().middleman().backend());
  }

  std::shared_ptr<const tls_context> ctx_;
  read_limits limits_;
};

struct running_transport {
  caf::io::middleman_actor actor;
  bool tls = false;
};

std::mutex transports_mu;
std::map<const caf::actor_system*, running_transport>
    running GUARDED_BY(transports_mu);
std::map<const caf::actor_system_config*, transport_settings>
    pending_settings GUARDED_BY(transports_mu);

} // namespace

void set_transport_settings(const caf::actor_system_config& cfg,
                            transport_settings given) {
  std::lock_guard<std::mutex> guard{transports_mu};
  pending_settings[&cfg] = given;
}

caf::actor_system::module* transport::make(caf::actor_system& sys,
                                           caf::detail::type_list<>) {
  return new transport(sys);
}

transport::transport(caf::actor_system& sys) : sys_(sys) {}

void transport::init(caf::actor_system_config&) {}

void transport::start() {
  transport_settings given;
  {
    std::lock_guard<std::mutex> guard{transports_mu};
    if (auto i = pending_settings.find(&sys_.config());
        i != pending_settings.end()) {
      given = i->second;
      pending_settings.erase(i);
    }
  }
  std::shared_ptr<const tls_context> ctx;
  if (given.tls)
    ctx = std::make_shared<const tls_context>(tls_of(sys_.config()));
  read_limits limits;
  limits.message = given.max_message_bytes;
  auto broker =
      sys_.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  actor_ = sys_.spawn<prism_middleman, caf::detached + caf::hidden>(
      std::move(broker), std::move(ctx), limits);
  std::lock_guard<std::mutex> guard{transports_mu};
  running[&sys_] = running_transport{actor_, given.tls};
}

void transport::stop() {
  {
    std::lock_guard<std::mutex> guard{transports_mu};
    running.erase(&sys_);
  }
  caf::scoped_actor self{sys_, true};
  self->send_exit(actor_, caf::exit_reason::kill);
  self->wait_for(actor_);
  actor_ = nullptr;
}

caf::actor_system::module::id_t transport::id() const {
  // CAF 0.17 has a slot for one TLS module; Prism's transport takes it, and
  // nothing in CAF's core or I/O library looks into it.
  return openssl_manager;
}

void* transport::subtype_ptr() {
  return this;
}

caf::io::middleman_actor transport::actor_of(caf::actor_system& sys) {
  std::lock_guard<std::mutex> guard{transports_mu};
  auto i = running.find(&sys);
  return i != running.end() ? i->second.actor : caf::io::middleman_actor{};
}

bool transport::uses_tls(caf::actor_system& sys) {
  std::lock_guard<std::mutex> guard{transports_mu};
  auto i = running.find(&sys);
  return i != running.end() && i->second.tls;
}

} // namespace prism::actors
