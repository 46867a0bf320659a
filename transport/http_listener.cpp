#include "transport/http_listener.hpp"

#include <sstream>
#include <stdexcept>

#include "protocol/base/crypto.hpp"
#include "protocol/base/text.hpp"
#include "transport/listener_impl.hpp"

namespace llmx::transport {

namespace {

bool token_matches(std::string_view authorization, const std::string& token) {
  constexpr std::string_view scheme = "bearer ";  // auth schemes are case-insensitive
  if (authorization.size() != scheme.size() + token.size() || text::lower(authorization.substr(0, scheme.size())) != scheme)
    return false;
  return crypto::equal_constant_time(authorization.substr(scheme.size()), token);
}

std::string serialize(HttpResponse response, unsigned version, bool keep_alive) {
  http::response<http::string_body> res{static_cast<http::status>(response.status), version};
  for (auto& [name, value] : response.headers) res.set(name, value);
  res.body() = std::move(response.body);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  std::ostringstream os;
  os << res;
  return std::move(os).str();
}

}  // namespace

bool origin_allowed(std::string_view origin, std::string_view host) {
  if (origin.empty()) return true;  // not a browser
  for (std::string_view scheme : {"http://", "https://"}) {
    if (!origin.starts_with(scheme)) continue;
    auto origin_host = origin.substr(scheme.size());  // host[:port]
    return is_local_host(origin_host) || (!host.empty() && origin_host == host);
  }
  return false;
}

bool is_local_host(std::string_view host) {
  auto name = text::lower(host.starts_with('[') ? host.substr(0, host.find(']') + 1) : host.substr(0, host.find(':')));
  if (name.ends_with('.')) name.pop_back();  // the root label: `localhost.` is localhost
  // 127/8 written as an address: `127.0.0.1.evil.example` is a name, and names can be rebound.
  bool loopback_v4 = name.starts_with("127.") && name.find_first_not_of("0123456789.") == std::string::npos;
  return name == "localhost" || name == "[::1]" || loopback_v4;
}

std::optional<std::string_view> HttpRequest::header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers)
    if (name == lower_name) return std::string_view(value);
  return std::nullopt;
}

// One HTTP connection: requests one after another (kept alive), each an exchange answered by the
// handler whole or as a stream. While an exchange waits for its answer the connection is read
// too, so a client that goes away is noticed (`dropped`) instead of found out at the next write.
struct HttpConnection : std::enable_shared_from_this<HttpConnection> {
  HttpConnection(HttpListener::Impl* owner, uint64_t id, tcp::socket socket)
      : owner(owner), id(id), stream(std::move(socket)) {}
  HttpListener::Impl* owner;
  uint64_t id;
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  std::optional<http::request_parser<http::string_body>> parser;
  std::deque<std::string> out;
  size_t queued = 0;
  unsigned version = 11;
  uint64_t exchange = 0;  // the exchange in progress
  bool answered = true;   // its answer is complete (queued)
  bool streaming = false;
  bool keep_alive = true;
  bool writing = false, watching = false, ended = false;
  std::optional<net::steady_timer> beat;  // the heartbeat of a streamed answer

  void start() {
    owner->connections[id] = weak_from_this();
    next_request();
  }

  // Waits for the next request: idle time first, then the request itself within its timeout.
  void next_request() {
    exchange = 0;
    if (ended) return;
    if (buffer.size() > 0) return read_request();
    stream.expires_after(owner->options.idle_timeout);
    stream.async_read_some(buffer.prepare(4096), [self = shared_from_this()](beast::error_code ec, size_t n) {
      if (ec) return self->end();
      self->buffer.commit(n);
      self->read_request();
    });
  }

  void read_request() {
    parser.emplace();
    parser->body_limit(owner->options.max_body);
    parser->header_limit(64 * 1024);
    stream.expires_after(owner->options.request_timeout);
    http::async_read_header(stream, buffer, *parser, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->read_failed(ec);
      auto& req = self->parser->get();
      self->version = req.version();
      if (!self->parser->is_done())
        if (auto r = self->refusal(req); r && r->status != 200) {  // not worth reading its body
          self->keep_alive = false;
          return self->queue_answer(serialize(std::move(*r), self->version, false));
        }
      // A client that waits to be told to send its body (curl does past 1 KiB) is told at once.
      if (req.version() >= 11 && !self->parser->is_done() &&
          text::lower(std::string_view(req[http::field::expect].data(), req[http::field::expect].size())) == "100-continue") {
        static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
        return net::async_write(self->stream, net::buffer(kContinue), [self](beast::error_code ec, size_t) {
          if (ec) return self->end();
          self->read_body();
        });
      }
      self->read_body();
    });
  }

  void read_body() {
    http::async_read(stream, buffer, *parser, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (!ec) return self->on_request(self->parser->release());
      self->read_failed(ec);
    });
  }

  void read_failed(beast::error_code ec) {
    {
      if (ec == http::error::body_limit) return refuse(413, "request body too large\n");
      if (ec == http::error::header_limit) return refuse(431, "request header too large\n");
      if (ec.category() == beast::error_code(http::error::end_of_stream).category() && ec != http::error::end_of_stream &&
          ec != http::error::partial_message)
        return refuse(400, "malformed HTTP request\n");
      end();  // closed, cut mid-request, or too slow
    }
  }

  // Why a request is refused from its header alone (before its body is read): a foreign Host or
  // Origin, a missing token; health checks are answered here too.
  std::optional<HttpResponse> refusal(const http::request<http::string_body>& req) {
    auto field = [&](http::field f) {
      auto v = req[f];
      return std::string_view(v.data(), v.size());
    };
    auto text = [](int status, std::string body) { return HttpResponse{status, {{"Content-Type", "text/plain"}}, std::move(body)}; };
    auto host = field(http::field::host);
    if (owner->options.local_only && !host.empty() && !is_local_host(host)) return text(403, "host not allowed\n");
    if (!origin_allowed(field(http::field::origin), host)) return text(403, "origin not allowed\n");
    auto target = std::string_view(req.target().data(), req.target().size());
    if (req.method() == http::verb::get && (target == "/healthz" || target == "/readyz")) {
      if (target == "/readyz" && owner->stopped) return text(503, "stopping\n");
      return text(200, owner->stopped ? "stopping\n" : "ok\n");
    }
    if (!owner->options.token.empty() && !token_matches(field(http::field::authorization), owner->options.token))
      return HttpResponse{401, {{"Content-Type", "text/plain"}, {"WWW-Authenticate", "Bearer realm=\"llmx\""}},
                          "a bearer token is required\n"};
    return std::nullopt;
  }

  void on_request(http::request<http::string_body> req) {
    version = req.version();
    keep_alive = req.keep_alive();
    if (version < 11) keep_alive = false;  // one exchange per connection, its end marks the body's
    if (auto r = refusal(req)) return queue_answer(serialize(std::move(*r), version, keep_alive));
    auto target = std::string_view(req.target().data(), req.target().size());
    if (websocket::is_upgrade(req)) {
      if (!owner->handlers.ws_message) return reply_local(404, "no WebSocket here\n");
      if (owner->stopped) return reply_local(503, "stopping\n");
      stream.expires_never();
      ended = true;  // the socket is the WebSocket connection's now, and so is its count
      owner->connections.erase(id);
      return owner->upgrade(stream.release_socket(), std::move(req));
    }
    if (!owner->handlers.request) return reply_local(404, "WebSocket only (and GET /healthz, /readyz)\n");
    HttpRequest request;
    request.method = std::string(req.method_string());
    request.target = std::string(target);
    for (const auto& f : req) {
      request.headers.emplace_back(text::lower({f.name_string().data(), f.name_string().size()}), std::string(f.value()));
    }
    request.body = std::move(req.body());
    exchange = ++owner->next_id;
    answered = false;
    streaming = false;
    owner->exchanges[exchange] = weak_from_this();
    watch();
    try {
      owner->handlers.request(exchange, std::move(request));
    } catch (const std::exception&) {  // a handler's bug costs its request, not the server
      queue_answer(serialize(HttpResponse{500, {{"Content-Type", "text/plain"}}, "internal error\n"}, version, false));
    }
  }

  // Reads while the answer is pending: the end of the connection is the client going away.
  void watch() {
    watching = true;
    stream.expires_never();
    stream.async_read_some(buffer.prepare(4096), [self = shared_from_this()](beast::error_code ec, size_t n) {
      self->watching = false;
      if (self->ended) return;
      if (!ec) {
        self->buffer.commit(n);  // the next request, sent early
        if (self->buffer.size() > 64 * 1024) return self->end();
        return self->answered && self->out.empty() ? self->after_answer() : self->watch();
      }
      if (ec == net::error::operation_aborted) return self->after_answer();  // stopped for the next request
      self->end();
    });
  }

  void heartbeat() {
    if (owner->options.heartbeat.empty()) return;
    if (!beat) beat.emplace(owner->ioc);
    beat->expires_after(owner->options.heartbeat_interval);
    beat->async_wait([self = shared_from_this(), x = exchange](beast::error_code ec) {
      if (ec || self->ended || self->exchange != x || self->answered || !self->streaming) return;
      const auto& beat = self->owner->options.heartbeat;
      self->queue(self->version >= 11 ? beast::buffers_to_string(http::make_chunk(net::buffer(beat))) : beat);
      self->heartbeat();
    });
  }

  void reply_local(int status, std::string body) {
    queue_answer(serialize(HttpResponse{status, {{"Content-Type", "text/plain"}}, std::move(body)}, version, keep_alive));
  }

  // A malformed request: answered, then the connection closes (the parser cannot go on).
  void refuse(int status, std::string body) {
    keep_alive = false;
    reply_local(status, std::move(body));
  }

  void queue_answer(std::string bytes) {
    answered = true;
    if (exchange) owner->exchanges.erase(exchange);
    queue(std::move(bytes));
  }

  void queue(std::string bytes) {
    if (ended) return;
    // A client that stopped reading is dropped once too much waits for it (one big answer alone is fine).
    if (!out.empty() && queued + bytes.size() > owner->options.max_queued) return end();
    queued += bytes.size();
    out.push_back(std::move(bytes));
    if (!writing) write();
  }

  void write() {
    if (out.empty()) {
      writing = false;
      if (!answered) return;
      if (watching) {  // the watch ends first, then the next request is read
        beast::error_code ignored;
        stream.socket().cancel(ignored);
        return;
      }
      return after_answer();
    }
    writing = true;
    stream.expires_after(owner->options.write_timeout);  // with the watch pending, only the write's timer
    net::async_write(stream, net::buffer(out.front()), [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->end();
      self->queued -= self->out.front().size();
      self->out.pop_front();
      self->write();
    });
  }

  void after_answer() {
    if (ended || !answered || writing) return;
    if (!keep_alive) return linger();
    next_request();
  }

  // Closes after the answer without losing it: what the client still sends (the rest of a refused
  // body) is read and dropped for a moment, so no reset overtakes the answer.
  void linger() {
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream.expires_after(std::chrono::seconds(1));
    buffer.clear();
    stream.async_read_some(buffer.prepare(16384), [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->end();
      self->buffer.clear();
      self->linger_more();
    });
  }
  void linger_more() {
    stream.async_read_some(buffer.prepare(16384), [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->end();
      self->buffer.clear();
      self->linger_more();
    });
  }

  void end() {
    if (ended) return;
    ended = true;
    beast::error_code ignored;
    stream.socket().close(ignored);
    if (beat) beat->cancel();
    --owner->live;
    owner->connections.erase(id);
    if (exchange && !answered) {
      owner->exchanges.erase(exchange);
      try {
        if (owner->handlers.dropped) owner->handlers.dropped(exchange);
      } catch (const std::exception&) {
      }
    }
  }
};

void HttpListener::Impl::accept() {
  acceptor.async_accept([self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !self->acceptor.is_open()) return;  // stop()
    if (ec) {  // out of file descriptors, say: try again shortly instead of going deaf
      auto timer = std::make_shared<net::steady_timer>(self->ioc, std::chrono::milliseconds(100));
      timer->async_wait([self, timer](beast::error_code) { self->accept(); });
      return;
    }
    if (self->live >= self->options.max_connections) {
      beast::error_code ignored;
      socket.close(ignored);
    } else {
      ++self->live;
      beast::error_code ignored;
      socket.set_option(net::socket_base::keep_alive(true), ignored);  // peers that vanish without a word
      socket.set_option(tcp::no_delay(true), ignored);  // each event goes out at once (no 40 ms Nagle wait)
      std::make_shared<HttpConnection>(self.get(), ++self->next_id, std::move(socket))->start();
    }
    self->accept();
  });
}

std::shared_ptr<HttpConnection> HttpListener::Impl::exchange(uint64_t id) {
  auto it = exchanges.find(id);
  if (it == exchanges.end()) return nullptr;
  auto conn = it->second.lock();
  return conn && !conn->ended && conn->exchange == id && !conn->answered ? conn : nullptr;
}

HttpListener::HttpListener(const std::string& host, uint16_t port, Handlers handlers, Options options)
    : impl_(std::make_shared<Impl>()) {
  impl_->handlers = std::move(handlers);
  impl_->options = std::move(options);
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

HttpListener::~HttpListener() { stop(); }

uint16_t HttpListener::port() const { return impl_->port; }

void HttpListener::respond(uint64_t exchange, HttpResponse response) {
  net::post(impl_->ioc, [impl = impl_, exchange, response = std::move(response)]() mutable {
    if (auto conn = impl->exchange(exchange))
      conn->queue_answer(serialize(std::move(response), conn->version, conn->keep_alive));
  });
}

void HttpListener::open_stream(uint64_t exchange, HttpResponse head) {
  net::post(impl_->ioc, [impl = impl_, exchange, head = std::move(head)]() mutable {
    auto conn = impl->exchange(exchange);
    if (!conn || conn->streaming) return;
    http::response<http::empty_body> res{static_cast<http::status>(head.status), conn->version};
    for (auto& [name, value] : head.headers) res.set(name, value);
    res.keep_alive(conn->keep_alive);
    if (conn->version >= 11) res.chunked(true);  // HTTP/1.0 has no chunks: the body ends with the connection
    std::ostringstream os;
    os << res.base();
    conn->streaming = true;
    conn->queue(std::move(os).str());
    conn->heartbeat();
  });
}

void HttpListener::stream(uint64_t exchange, std::string bytes) {
  if (bytes.empty()) return;  // an empty chunk would end the body
  net::post(impl_->ioc, [impl = impl_, exchange, bytes = std::move(bytes)] {
    if (auto conn = impl->exchange(exchange); conn && conn->streaming)
      conn->queue(conn->version >= 11 ? beast::buffers_to_string(http::make_chunk(net::buffer(bytes))) : bytes);
  });
}

void HttpListener::end_stream(uint64_t exchange) {
  net::post(impl_->ioc, [impl = impl_, exchange] {
    if (auto conn = impl->exchange(exchange); conn && conn->streaming)
      conn->queue_answer(conn->version >= 11 ? beast::buffers_to_string(http::make_chunk_last()) : std::string());
  });
}

void HttpListener::send(uint64_t conn, std::string text) { sender()(conn, std::move(text)); }

std::function<void(uint64_t, std::string)> HttpListener::sender() const {
  return [impl = impl_](uint64_t conn, std::string text) {
    net::post(impl->ioc, [impl, conn, text = std::move(text)]() mutable {
      auto it = impl->sockets.find(conn);
      if (it == impl->sockets.end()) return;
      if (auto s = it->second.lock()) s->send(std::move(text));
    });
  };
}

void HttpListener::close(uint64_t conn) { closer()(conn); }

std::function<void(uint64_t)> HttpListener::closer() const {
  return [impl = impl_](uint64_t conn) {
    net::post(impl->ioc, [impl, conn] {
      auto it = impl->sockets.find(conn);
      if (it == impl->sockets.end()) return;
      if (auto s = it->second.lock()) s->close();
    });
  };
}

void HttpListener::stop_accepting() {
  std::promise<void> done;
  net::post(impl_->ioc, [impl = impl_, &done] {
    impl->stopped = true;
    beast::error_code ignored;
    impl->acceptor.close(ignored);
    done.set_value();
  });
  done.get_future().wait();
}

void HttpListener::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  net::post(impl_->ioc, [impl = impl_] {
    impl->stopped = true;
    beast::error_code ignored;
    impl->acceptor.close(ignored);
    impl->close_websockets();
    std::vector<std::shared_ptr<HttpConnection>> open;  // mid-request, waiting or streaming
    for (auto& [_, weak] : impl->connections)
      if (auto c = weak.lock()) open.push_back(c);
    for (auto& c : open) {
      if (c->answered && c->writing) c->keep_alive = false;  // its answer goes out, then it closes
      else c->end();
    }
  });
  // Closing handshakes finish, then nothing is left to run; a peer that does not answer its
  // close is not waited for long.
  if (impl_->finished.get_future().wait_for(std::chrono::seconds(2)) != std::future_status::ready) impl_->ioc.stop();
  impl_->thread.join();
}

}  // namespace llmx::transport
