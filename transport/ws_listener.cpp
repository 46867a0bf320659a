#include "transport/ws_listener.hpp"

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <deque>
#include <future>
#include <stdexcept>
#include <thread>
#include <unordered_map>

namespace llmx::transport {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;

namespace {

// A browser page may only connect from the machine itself (no DNS rebinding from a web page).
bool origin_allowed(beast::string_view origin) {
  if (origin.empty()) return true;  // not a browser
  for (beast::string_view local : {"http://localhost", "http://127.0.0.1", "http://[::1]", "https://localhost",
                                   "https://127.0.0.1", "https://[::1]"})
    if (origin == local || (origin.starts_with(local) && origin.size() > local.size() && origin[local.size()] == ':'))
      return true;
  return false;
}

}  // namespace

struct WsListener::Impl : std::enable_shared_from_this<WsListener::Impl> {
  struct WsSession;
  net::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  Handlers handlers;
  Limits limits;
  std::thread thread;
  std::promise<void> finished;  // set when the io thread has run out of work
  uint64_t next_id = 0;
  uint16_t port = 0;  // set once listening (read from any thread)
  size_t live = 0;  // connections open (HTTP or WebSocket)
  std::unordered_map<uint64_t, std::weak_ptr<WsSession>> sessions;  // io thread only
  bool stopped = false;

  struct WsSession : std::enable_shared_from_this<WsSession> {
    WsSession(Impl* owner, uint64_t id, tcp::socket socket) : owner(owner), id(id), ws(std::move(socket)) {}
    Impl* owner;
    uint64_t id;
    websocket::stream<beast::tcp_stream> ws;
    beast::flat_buffer in;
    std::deque<std::string> out;
    size_t queued = 0;  // bytes in `out`
    bool writing = false, closing = false, close_sent = false, ended = false;

    void start(http::request<http::string_body> req) {
      ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
      ws.read_message_max(owner->limits.max_message);
      ws.async_accept(req, [self = shared_from_this()](beast::error_code ec) {
        if (ec) return self->end();
        self->owner->sessions[self->id] = self;
        self->owner->handlers.opened(self->id);
        self->read();
      });
    }
    void read() {
      ws.async_read(in, [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec) return self->end();
        std::string text = beast::buffers_to_string(self->in.data());
        self->in.consume(self->in.size());
        self->owner->handlers.message(self->id, std::move(text));
        self->read();
      });
    }
    void send(std::string text) {
      if (ended || closing) return;
      queued += text.size();
      if (queued > owner->limits.max_queued) return end();  // a client that stopped reading is dropped
      out.push_back(std::move(text));
      if (!writing) write();
    }
    void write() {
      if (out.empty()) {
        writing = false;
        if (closing && !close_sent) {
          close_sent = true;
          ws.async_close(websocket::close_code::normal, [self = shared_from_this()](beast::error_code) { self->end(); });
        }
        return;
      }
      writing = true;
      ws.text(true);
      ws.async_write(net::buffer(out.front()), [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec) return self->end();
        self->queued -= self->out.front().size();
        self->out.pop_front();
        self->write();
      });
    }
    void close() {
      if (closing || ended) return;
      closing = true;
      if (!writing) write();
    }
    // Once: the session is gone for the caller.
    void end() {
      if (ended) return;
      ended = true;
      beast::error_code ignored;
      beast::get_lowest_layer(ws).socket().close(ignored);
      --owner->live;
      if (owner->sessions.erase(id)) owner->handlers.closed(id);
    }
  };

  // One HTTP request: health checks, or the WebSocket handshake.
  struct HttpSession : std::enable_shared_from_this<HttpSession> {
    HttpSession(Impl* owner, tcp::socket socket) : owner(owner), stream(std::move(socket)) {}
    Impl* owner;
    beast::tcp_stream stream;
    beast::flat_buffer buffer;
    http::request_parser<http::string_body> parser;
    http::response<http::string_body> res;
    bool handed_over = false;

    void start() {
      parser.body_limit(64 * 1024);  // health checks and handshakes have no body worth keeping
      stream.expires_after(std::chrono::seconds(10));  // the whole request: slow clients are cut
      http::async_read(stream, buffer, parser, [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec) return self->done();
        self->on_request(self->parser.release());
      });
    }
    void on_request(http::request<http::string_body> req) {
      if (websocket::is_upgrade(req)) {
        if (!origin_allowed(req[http::field::origin])) return reply(req, http::status::forbidden, "origin not allowed\n");
        if (owner->stopped) return reply(req, http::status::service_unavailable, "stopping\n");
        stream.expires_never();
        handed_over = true;
        auto ws = std::make_shared<WsSession>(owner, ++owner->next_id, stream.release_socket());
        return ws->start(std::move(req));
      }
      if (req.method() == http::verb::get && (req.target() == "/healthz" || req.target() == "/readyz"))
        return reply(req, http::status::ok, owner->stopped ? "stopping\n" : "ok\n");
      reply(req, http::status::not_found, "WebSocket only (and GET /healthz, /readyz)\n");
    }
    void reply(const http::request<http::string_body>& req, http::status status, std::string body) {
      res = http::response<http::string_body>{status, req.version()};
      res.set(http::field::content_type, "text/plain");
      res.keep_alive(false);
      res.body() = std::move(body);
      res.prepare_payload();
      http::async_write(stream, res, [self = shared_from_this()](beast::error_code, size_t) { self->done(); });
    }
    void done() {
      if (handed_over) return;  // the WebSocket session counts it now
      beast::error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
      --owner->live;
    }
  };

  void accept() {
    acceptor.async_accept([self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !self->acceptor.is_open()) return;  // stop()
      if (ec) {  // out of file descriptors, say: try again shortly instead of going deaf
        auto timer = std::make_shared<net::steady_timer>(self->ioc, std::chrono::milliseconds(100));
        timer->async_wait([self, timer](beast::error_code) { self->accept(); });
        return;
      }
      if (self->live >= self->limits.max_connections) {
        beast::error_code ignored;
        socket.close(ignored);
      } else {
        ++self->live;
        std::make_shared<HttpSession>(self.get(), std::move(socket))->start();
      }
      self->accept();
    });
  }
};

WsListener::WsListener(const std::string& host, uint16_t port, Handlers handlers, Limits limits)
    : impl_(std::make_shared<Impl>()) {
  impl_->handlers = std::move(handlers);
  impl_->limits = limits;
  beast::error_code ec;
  auto address = net::ip::make_address(host, ec);
  if (ec) throw std::runtime_error("not an IP address: " + host);
  tcp::endpoint endpoint{address, port};
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  impl_->port = impl_->acceptor.local_endpoint().port();
  impl_->accept();
  impl_->thread = std::thread([impl = impl_] {
    impl->ioc.run();
    impl->finished.set_value();
  });
}

WsListener::~WsListener() { stop(); }

uint16_t WsListener::port() const { return impl_->port; }

void WsListener::send(uint64_t conn, std::string text) { sender()(conn, std::move(text)); }

std::function<void(uint64_t, std::string)> WsListener::sender() const {
  return [impl = impl_](uint64_t conn, std::string text) {
    net::post(impl->ioc, [impl, conn, text = std::move(text)]() mutable {
      auto it = impl->sessions.find(conn);
      if (it == impl->sessions.end()) return;
      if (auto s = it->second.lock()) s->send(std::move(text));
    });
  };
}

void WsListener::close(uint64_t conn) {
  net::post(impl_->ioc, [impl = impl_, conn] {
    auto it = impl->sessions.find(conn);
    if (it == impl->sessions.end()) return;
    if (auto s = it->second.lock()) s->close();
  });
}

void WsListener::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  net::post(impl_->ioc, [impl = impl_] {
    impl->stopped = true;
    beast::error_code ignored;
    impl->acceptor.close(ignored);
    std::vector<std::shared_ptr<Impl::WsSession>> open;
    for (auto& [_, weak] : impl->sessions)
      if (auto s = weak.lock()) open.push_back(s);
    for (auto& s : open) s->close();
  });
  // Closing handshakes finish, then nothing is left to run; a peer that does not answer its
  // close is not waited for long.
  if (impl_->finished.get_future().wait_for(std::chrono::seconds(2)) != std::future_status::ready) impl_->ioc.stop();
  impl_->thread.join();
}

}  // namespace llmx::transport
