#include "http/http_server.hpp"

#include <atomic>
#include <optional>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "common/log.hpp"
#include "common/secret.hpp"
#include "prism/error.hpp"

namespace prism::actors {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using plain_stream = beast::tcp_stream;
using tls_stream = beast::ssl_stream<beast::tcp_stream>;

constexpr const char* token_cookie = "prism_token";

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

std::string percent_decoded(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
               hex_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(text[i + 1]) * 16 +
                               hex_value(text[i + 2]));
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

/// The value of cookie `name` in a Cookie header, or nullopt.
std::optional<std::string> cookie_value(std::string_view header,
                                        std::string_view name) {
  while (!header.empty()) {
    auto end = header.find(';');
    auto part = trimmed(header.substr(0, end));
    header = end == std::string_view::npos ? std::string_view{}
                                           : header.substr(end + 1);
    auto eq = part.find('=');
    if (eq != std::string_view::npos && trimmed(part.substr(0, eq)) == name)
      return std::string{trimmed(part.substr(eq + 1))};
  }
  return std::nullopt;
}

std::string html_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// The form a browser without the token gets.
http_reply login_form(const std::string& what, const std::string& why) {
  http_reply r;
  r.status = 401;
  r.content_type = "text/html; charset=utf-8";
  r.body = "<!doctype html><html><head><meta charset=\"utf-8\"><title>Prism " +
           html_escaped(what) + "</title></head><body><h1>Prism " +
           html_escaped(what) + "</h1><p>" + html_escaped(why) +
           "</p><form method=\"post\" action=\"/login\"><label>Cluster "
           "token <input id=\"token\" name=\"token\" type=\"password\" "
           "autocomplete=\"off\"></label> <button id=\"login\" "
           "type=\"submit\">Log in</button></form></body></html>";
  return r;
}

http_reply plain_reply(unsigned status, std::string body) {
  http_reply r;
  r.status = status;
  r.body = std::move(body);
  r.body += '\n';
  return r;
}

bool wants_text(const std::string& path) {
  return path == "/metrics" || path.rfind("/api/", 0) == 0;
}

} // namespace

// -- the server's shared state ------------------------------------------------

struct http_server::impl {
  http_settings settings;
  std::shared_ptr<spdlog::logger> log;
  asio::io_context io{1};
  std::optional<asio::ssl::context> tls;
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_pause{io};
  std::optional<asio::thread_pool> routes;
  std::thread io_thread;
  std::uint16_t port = 0;

  std::atomic<std::uint64_t> accepted{0};
  std::atomic<std::uint64_t> refused{0};
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> unauthorized{0};
  std::atomic<std::uint64_t> malformed{0};
  std::atomic<std::uint64_t> timed_out{0};
  std::atomic<std::uint64_t> overloaded{0};
  std::atomic<std::uint64_t> open{0};
  /// Requests handed to the route threads and not answered yet. Only the
  /// I/O thread changes it.
  std::size_t waiting = 0;

  void accept();
  http_counters counters() const;
  template <class Stream>
  void start_session(tcp::socket socket);
  /// The answer to `req` that needs no route, or nullopt: a refusal, the
  /// login.
  std::optional<http_reply>
  answer_at_door(const http::request<http::string_body>& req);
};

// -- one connection -----------------------------------------------------------

namespace {

template <class Stream>
class http_session : public std::enable_shared_from_this<http_session<Stream>> {
public:
  http_session(http_server::impl& srv, tcp::socket socket, std::string peer)
      : srv_(srv), stream_(make_stream(srv, std::move(socket))),
        peer_(std::move(peer)) {
    ++srv_.open;
  }

  ~http_session() {
    --srv_.open;
  }

  void start() {
    lowest().expires_after(srv_.settings.limits.request_timeout);
    if constexpr (std::is_same_v<Stream, tls_stream>) {
      stream_.async_handshake(
          asio::ssl::stream_base::server,
          [self = this->shared_from_this()](beast::error_code ec) {
            if (ec)
              return self->failed(ec, "TLS handshake");
            self->read_request();
          });
    } else {
      read_request();
    }
  }

private:
  static Stream make_stream(http_server::impl& srv, tcp::socket socket) {
    if constexpr (std::is_same_v<Stream, tls_stream>)
      return Stream{beast::tcp_stream{std::move(socket)}, *srv.tls};
    else
      return Stream{std::move(socket)};
  }

  beast::tcp_stream& lowest() {
    return beast::get_lowest_layer(stream_);
  }

  /// A kept-alive connection waits up to the idle timeout for its next
  /// request's first byte; the request then has the request timeout.
  void await_next_request() {
    lowest().expires_after(srv_.settings.limits.idle_timeout);
    auto room = buffer_.prepare(512);
    stream_.async_read_some(room, [self = this->shared_from_this()](
                                      beast::error_code ec, std::size_t n) {
      if (ec)
        return self->failed(ec, "waiting for a request");
      self->buffer_.commit(n);
      self->lowest().expires_after(self->srv_.settings.limits.request_timeout);
      self->read_request();
    });
  }

  void read_request() {
    parser_.emplace();
    parser_->header_limit(
        static_cast<std::uint32_t>(srv_.settings.limits.max_header_bytes));
    parser_->body_limit(srv_.settings.limits.max_body_bytes);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
          if (ec)
            return self->failed(ec, "reading a request");
          self->handle(self->parser_->release());
        });
  }

  void handle(http::request<http::string_body> req) {
    ++srv_.requests;
    keep_alive_ = req.keep_alive();
    head_ = req.method() == http::verb::head;
    if (auto done = srv_.answer_at_door(req))
      return write(std::move(*done));
    auto target = std::string{req.target()};
    auto q = target.find('?');
    http_request r;
    r.method = std::string{req.method_string()};
    r.path = percent_decoded(std::string_view{target}.substr(0, q));
    if (q != std::string::npos)
      r.query = decode_form(target.substr(q + 1));
    r.body = std::move(req.body());
    r.peer = peer_;
    r.port = srv_.settings.what;
    r.counters = srv_.counters();
    auto route = srv_.settings.routes.find(r.path);
    if (route == srv_.settings.routes.end())
      return write(plain_reply(404, "no such page: " + r.path));
    if (srv_.waiting >= srv_.settings.limits.max_waiting) {
      ++srv_.overloaded;
      return write(plain_reply(503, "too many requests wait; try again"));
    }
    ++srv_.waiting;
    asio::post(*srv_.routes, [self = this->shared_from_this(),
                              fn = &route->second, r = std::move(r)] {
      http_reply reply;
      try {
        reply = (*fn)(r);
      } catch (const std::exception& e) {
        reply = plain_reply(500, e.what());
      }
      asio::post(self->srv_.io, [self, reply = std::move(reply)]() mutable {
        --self->srv_.waiting;
        self->write(std::move(reply));
      });
    });
  }

  void write(http_reply reply) {
    res_ = {};
    res_.version(11);
    res_.result(reply.status);
    res_.keep_alive(keep_alive_);
    res_.set(http::field::server, "prism");
    res_.set(http::field::content_type, reply.content_type);
    res_.set(http::field::cache_control, "no-store");
    res_.set("X-Content-Type-Options", "nosniff");
    for (auto& [name, value] : reply.headers)
      res_.set(name, value);
    res_.body() = std::move(reply.body);
    res_.prepare_payload();
    if (head_)
      res_.body().clear();
    lowest().expires_after(srv_.settings.limits.write_timeout);
    http::async_write(
        stream_, res_,
        [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
          if (ec)
            return self->failed(ec, "writing an answer");
          if (!self->keep_alive_)
            return self->close();
          self->await_next_request();
        });
  }

  /// Answers a malformed or oversized request before closing.
  void refuse(unsigned status, const std::string& why) {
    keep_alive_ = false;
    head_ = false;
    write(plain_reply(status, why));
  }

  void failed(beast::error_code ec, const char* during) {
    if (ec == beast::error::timeout) {
      ++srv_.timed_out;
      return close();
    }
    if (ec == http::error::header_limit) {
      ++srv_.malformed;
      return refuse(431, "the request's headers are too large");
    }
    if (ec == http::error::body_limit) {
      ++srv_.malformed;
      return refuse(413, "the request's body is too large");
    }
    if (ec.category() ==
            http::make_error_code(http::error::bad_target).category() &&
        ec != http::error::end_of_stream &&
        ec != http::error::partial_message) {
      ++srv_.malformed;
      return refuse(400, "malformed request");
    }
    if (ec.category() == asio::error::get_ssl_category() ||
        ec == asio::ssl::error::stream_truncated)
      ++srv_.malformed;
    srv_.log->debug("{} connection {}: {} ended it ({})", srv_.settings.what,
                    peer_, during, ec.message());
    close();
  }

  void close() {
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().close();
  }

  http_server::impl& srv_;
  Stream stream_;
  std::string peer_;
  beast::flat_buffer buffer_{8 * 1024};
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  bool keep_alive_ = false;
  bool head_ = false;
};

} // namespace

template <class Stream>
void http_server::impl::start_session(tcp::socket socket) {
  beast::error_code ec;
  auto remote = socket.remote_endpoint(ec);
  auto peer =
      ec ? std::string{"?"}
         : remote.address().to_string() + ":" + std::to_string(remote.port());
  std::make_shared<http_session<Stream>>(*this, std::move(socket),
                                         std::move(peer))
      ->start();
}

void http_server::impl::accept() {
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted)
      return;
    if (ec) {
      // Out of descriptors, most likely: pause rather than spin.
      log->warn("{} port: accepting a connection failed: {}", settings.what,
                ec.message());
      accept_pause.expires_after(std::chrono::milliseconds{100});
      accept_pause.async_wait([this](beast::error_code e) {
        if (!e)
          accept();
      });
      return;
    }
    ++accepted;
    if (open.load() >= settings.limits.max_connections) {
      ++refused;
      beast::error_code ignored;
      socket.close(ignored);
    } else if (tls) {
      start_session<tls_stream>(std::move(socket));
    } else {
      start_session<plain_stream>(std::move(socket));
    }
    accept();
  });
}

std::optional<http_reply>
http_server::impl::answer_at_door(const http::request<http::string_body>& req) {
  auto target = req.target();
  auto path = std::string{target.substr(0, target.find('?'))};
  auto method = req.method();
  bool login = path == "/login" && method == http::verb::post;
  if (method != http::verb::get && method != http::verb::head && !login) {
    auto r = plain_reply(405, "this port is read-only: GET only");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  if (settings.token.empty()) {
    if (login)
      return plain_reply(404, "this port wants no token");
    return std::nullopt;
  }
  if (login) {
    auto form = decode_form(req.body());
    if (!same_secret(form["token"], settings.token)) {
      ++unauthorized;
      log->warn("{} port: refused a login from a client: wrong cluster token",
                settings.what);
      return login_form(settings.what, "That is not the cluster token.");
    }
    http_reply r;
    r.status = 303;
    r.headers.emplace_back("Location", "/");
    r.headers.emplace_back("Set-Cookie",
                           std::string{token_cookie} + "=" + settings.token +
                               "; Path=/; HttpOnly; SameSite=Strict" +
                               (tls ? "; Secure" : ""));
    return r;
  }
  if (presents_token(std::string{req[http::field::authorization]},
                     std::string{req[http::field::cookie]}, settings.token))
    return std::nullopt;
  ++unauthorized;
  if (wants_text(path)) {
    auto r = plain_reply(401, "this port wants the cluster token: "
                              "Authorization: Bearer TOKEN");
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"prism\"");
    return r;
  }
  return login_form(settings.what, "This cluster wants its token.");
}

// -- the server
// -----------------------------------------------------------------

http_server::http_server(http_settings settings)
    : impl_(std::make_unique<impl>()) {
  auto& s = *impl_;
  s.settings = std::move(settings);
  s.log = component_logger("http");
  const auto& where = s.settings.listen;
  auto address = address_of(where);
  auto refuse = [&](const std::string& why) -> invalid_argument_error {
    return invalid_argument_error("cannot open the " + s.settings.what +
                                  " port on " + address + ": " + why);
  };
  bool tls = !s.settings.tls.cert.empty();
  if (!is_loopback(where.host) && !s.settings.insecure) {
    if (!tls)
      throw refuse("beyond loopback it speaks TLS only (give the TLS files, "
                   "or allow it insecure)");
    if (s.settings.token.empty())
      throw refuse("beyond loopback it wants the cluster token");
  }
  if (tls) {
    try {
      s.tls.emplace(asio::ssl::context::tls_server);
      s.tls->set_options(
          asio::ssl::context::default_workarounds |
          asio::ssl::context::no_sslv2 | asio::ssl::context::no_sslv3 |
          asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
      s.tls->use_certificate_chain_file(s.settings.tls.cert);
      s.tls->use_private_key_file(s.settings.tls.key, asio::ssl::context::pem);
    } catch (const std::exception& e) {
      throw refuse(std::string{"its TLS files cannot be used: "} + e.what());
    }
  }
  try {
    tcp::resolver resolver{s.io};
    auto host = where.host.empty() ? std::string{"0.0.0.0"} : where.host;
    auto found = resolver.resolve(host, std::to_string(where.port),
                                  tcp::resolver::passive);
    auto endpoint = found.begin()->endpoint();
    s.acceptor.open(endpoint.protocol());
    s.acceptor.set_option(asio::socket_base::reuse_address(true));
    s.acceptor.bind(endpoint);
    s.acceptor.listen(asio::socket_base::max_listen_connections);
    s.port = s.acceptor.local_endpoint().port();
  } catch (const std::exception& e) {
    throw refuse(e.what());
  }
  s.routes.emplace(std::max<std::size_t>(1, s.settings.limits.route_threads));
  s.accept();
  s.io_thread = std::thread{[&s] {
    for (;;) {
      try {
        s.io.run();
        return;
      } catch (const std::exception& e) {
        s.log->error("{} port: {}", s.settings.what, e.what());
      }
    }
  }};
  s.log->info("{} at {}", s.settings.what, url());
}

http_server::~http_server() {
  auto& s = *impl_;
  asio::post(s.io, [&s] {
    beast::error_code ignored;
    s.acceptor.close(ignored);
    s.accept_pause.cancel();
  });
  s.io.stop();
  if (s.io_thread.joinable())
    s.io_thread.join();
  // A route that runs finishes (each is bounded); its answer is dropped with
  // the I/O context, and every connection with it.
  s.routes->stop();
  s.routes->join();
}

std::uint16_t http_server::port() const {
  return impl_->port;
}

std::string http_server::url(const std::string& reached_host) const {
  auto host = impl_->settings.listen.host;
  if (is_wildcard(host))
    host = reached_host.empty() ? std::string{"127.0.0.1"} : reached_host;
  return std::string{impl_->tls ? "https" : "http"} + "://" +
         address_of(host_port{host, impl_->port});
}

http_counters http_server::counters() const {
  return impl_->counters();
}

http_counters http_server::impl::counters() const {
  http_counters c;
  c.accepted = accepted;
  c.refused = refused;
  c.requests = requests;
  c.unauthorized = unauthorized;
  c.malformed = malformed;
  c.timed_out = timed_out;
  c.overloaded = overloaded;
  c.open_connections = open;
  return c;
}

std::string http_request::param(const std::string& name,
                                std::string fallback) const {
  auto i = query.find(name);
  return i == query.end() ? fallback : i->second;
}

bool presents_token(const std::string& authorization, const std::string& cookie,
                    const std::string& token) {
  std::string_view auth = trimmed(authorization);
  constexpr std::string_view bearer = "bearer ";
  if (auth.size() > bearer.size()) {
    bool is_bearer = true;
    for (std::size_t i = 0; i < bearer.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(auth[i])) != bearer[i])
        is_bearer = false;
    if (is_bearer &&
        same_secret(std::string{trimmed(auth.substr(bearer.size()))}, token))
      return true;
  }
  auto c = cookie_value(cookie, token_cookie);
  return c && same_secret(*c, token);
}

std::map<std::string, std::string> decode_form(const std::string& text) {
  std::map<std::string, std::string> result;
  std::string_view rest{text};
  while (!rest.empty()) {
    auto end = rest.find('&');
    auto part = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{}
                                         : rest.substr(end + 1);
    if (part.empty())
      continue;
    auto eq = part.find('=');
    auto name = percent_decoded(part.substr(0, eq));
    auto value = eq == std::string_view::npos
                     ? std::string{}
                     : percent_decoded(part.substr(eq + 1));
    result[std::move(name)] = std::move(value);
  }
  return result;
}

} // namespace prism::actors
