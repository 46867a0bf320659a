// The inside of HttpListener (http_listener.hpp), shared by its two files: http_listener.cpp (the
// acceptor and HTTP exchanges) and ws_connection.cpp (WebSocket connections). Only they include
// Beast.
#pragma once

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <deque>
#include <future>
#include <thread>
#include <unordered_map>

#include "transport/http_listener.hpp"

namespace llmx::transport {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;

struct HttpConnection;
struct WsConnection;

struct HttpListener::Impl : std::enable_shared_from_this<HttpListener::Impl> {
  net::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  Handlers handlers;
  Options options;
  std::thread thread;
  std::promise<void> finished;  // set when the io thread has run out of work
  uint64_t next_id = 0;         // exchanges, WebSocket connections and HTTP connections
  uint16_t port = 0;            // set once listening (read from any thread)
  size_t live = 0;              // connections open (HTTP or WebSocket)
  bool stopped = false;         // no new connections
  // All io thread only.
  std::unordered_map<uint64_t, std::weak_ptr<HttpConnection>> connections;  // by connection id
  std::unordered_map<uint64_t, std::weak_ptr<HttpConnection>> exchanges;    // unanswered, by exchange id
  std::unordered_map<uint64_t, std::weak_ptr<WsConnection>> sockets;        // WebSocket, by connection id

  void accept();
  std::shared_ptr<HttpConnection> exchange(uint64_t id);
  // Hands an upgrade request's socket to a new WebSocket connection.
  void upgrade(tcp::socket socket, http::request<http::string_body> request);
  void close_websockets();
};

// A WebSocket connection: messages in, a write queue out.
struct WsConnection : std::enable_shared_from_this<WsConnection> {
  WsConnection(HttpListener::Impl* owner, uint64_t id, tcp::socket socket)
      : owner(owner), id(id), ws(std::move(socket)) {}
  HttpListener::Impl* owner;
  uint64_t id;
  websocket::stream<beast::tcp_stream> ws;
  beast::flat_buffer in;
  std::deque<std::string> out;
  size_t queued = 0;  // bytes in `out`
  bool opened = false;  // the handshake completed
  bool writing = false, closing = false, close_sent = false, ended = false;

  void start(http::request<http::string_body> request);
  void read();
  void send(std::string text);
  void write();
  void close();  // after what is queued
  void end();    // once: the connection is gone for the caller
};

}  // namespace llmx::transport
