#include "transport/listener_impl.hpp"

namespace llmx::transport {

void HttpListener::Impl::upgrade(tcp::socket socket, http::request<http::string_body> request) {
  auto ws = std::make_shared<WsConnection>(this, ++next_id, std::move(socket));
  ws->start(std::move(request));
}

void HttpListener::Impl::close_websockets() {
  std::vector<std::shared_ptr<WsConnection>> open;
  for (auto& [_, weak] : sockets)
    if (auto s = weak.lock()) open.push_back(s);
  for (auto& s : open) s->close();
}

void WsConnection::start(http::request<http::string_body> request) {
  ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
  ws.read_message_max(owner->options.max_message);
  owner->sockets[id] = weak_from_this();  // from now on, stop() closes it
  ws.async_accept(request, [self = shared_from_this()](beast::error_code ec) {
    if (ec) return self->end();
    self->opened = true;
    self->owner->handlers.ws_opened(self->id);
    self->read();
  });
}

void WsConnection::read() {
  ws.async_read(in, [self = shared_from_this()](beast::error_code ec, size_t) {
    if (ec) return self->end();
    std::string text = beast::buffers_to_string(self->in.data());
    self->in.consume(self->in.size());
    self->owner->handlers.ws_message(self->id, std::move(text));
    self->read();
  });
}

void WsConnection::send(std::string text) {
  if (ended || closing) return;
  // A client that stopped reading is dropped once too much waits for it (one big message alone is fine).
  if (!out.empty() && queued + text.size() > owner->options.max_queued) return end();
  queued += text.size();
  out.push_back(std::move(text));
  if (!writing) write();
}

void WsConnection::write() {
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

void WsConnection::close() {
  if (closing || ended) return;
  if (!opened) return end();  // mid-handshake: nothing to say goodbye to
  closing = true;
  if (!writing) write();
}

void WsConnection::end() {
  if (ended) return;
  ended = true;
  beast::error_code ignored;
  beast::get_lowest_layer(ws).socket().close(ignored);
  --owner->live;
  owner->sockets.erase(id);
  if (opened) owner->handlers.ws_closed(id);
}

}  // namespace llmx::transport
