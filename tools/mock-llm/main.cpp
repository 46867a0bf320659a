// mock-llm: a scripted OpenAI-compatible server (Chat Completions and Responses wires) for the
// demo and the integration tests. See scenarios.cpp and fault_scenarios.cpp for the behaviours
// selected with `@mock:NAME` directives, dialects.cpp for the provider stream shapes.
//
//   mock-llm [--port N] [--scenario NAME] [--dialect NAME] [--record FILE] [--delay-ms N]
//            [--exit-on-stdin-eof] [--max-threads N] [--models FILE]
//            [--model-info ok|malformed|missing] [--models-delay-ms N]
//            [--refuse-wire chat|responses] [--refuse-style not-found|cache-key]
//
// The first stdout line is the base URL (http://127.0.0.1:<port>/v1); it runs until SIGTERM or
// SIGINT (exit 0), or until stdin reaches EOF when --exit-on-stdin-eof is given.

#include "tools/mock-llm/dialects.hpp"
#include "tools/mock-llm/model_catalog.hpp"
#include "tools/mock-llm/http.hpp"
#include "tools/mock-llm/request.hpp"
#include "tools/mock-llm/responses_request.hpp"
#include "tools/mock-llm/responses_writer.hpp"
#include "tools/mock-llm/scenarios.hpp"
#include "tools/mock-llm/sse_writer.hpp"
#include "tools/mock-llm/state.hpp"
#include "tools/mock-llm/text_util.hpp"
#include "tools/mock-llm/thread_pool.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <sys/socket.h>
#include <unistd.h>

namespace {

using namespace mockllm;

struct Options {
  int port = 0;
  std::string scenario = "text";
  Dialect dialect = Dialect::Default; // chat stream shape unless a directive has dialect=
  std::string record_file;
  long long delay_ms = 0;
  bool exit_on_stdin_eof = false;
  size_t max_threads = 4096;
  ModelCatalog models = builtin_model_catalog();
  ModelInfoMode model_info = ModelInfoMode::Ok;
  long long models_delay_ms = 0;  // before /v1/models and /model/info answer
  std::string refuse_wire;        // "chat" or "responses": that route answers like a proxy without it
  std::string refuse_style = "not-found";
};

void usage(std::FILE *to) {
  fmt::print(to,
             "usage: mock-llm [--port N] [--scenario NAME] [--dialect NAME] [--record FILE]\n"
             "                [--delay-ms N] [--exit-on-stdin-eof] [--max-threads N]\n"
             "Prints its base URL (http://127.0.0.1:<port>/v1) as the first stdout line.\n"
             "                [--models FILE] [--model-info ok|malformed|missing]\n"
             "                [--models-delay-ms N] [--refuse-wire chat|responses]\n"
             "                [--refuse-style not-found|cache-key]\n"
             "Routes: POST /v1/chat/completions, POST /v1/responses, GET /v1/models,\n"
             "        GET /model/info and /v1/model/info (LiteLLM's; --models FILE replaces\n"
             "        the built-in set), GET /_mock/requests, GET /_mock/headers,\n"
             "        GET /_mock/stats, POST /_mock/reset\n"
             "The last user message picks a scenario with `@mock:NAME key=value ...`;\n"
             "`dialect=NAME` (or --dialect) shapes the chat stream like a provider.\n"
             "Scenarios:");
  for (const auto &n : scenario_names()) fmt::print(to, " {}", n);
  fmt::print(to, "\nDialects:");
  for (const auto &n : dialect_names()) fmt::print(to, " {}", n);
  fmt::print(to,
             "\nFault options: status code=N body=json|text|none times=K retry_after=S|date|none\n"
             "  retry_after_ms=M; error_chunk kind=rate_limit|overloaded|invalid times=K;\n"
             "  huge bytes=N; context_length times=K\n");
}

std::optional<long long> to_int(const std::string &s, long long lo, long long hi) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

// Accepts both "--opt value" and "--opt=value". Exits with status 2 on bad usage.
Options parse_args(int argc, char **argv) {
  Options o;
  auto fail = [](const std::string &msg) {
    fmt::print(stderr, "mock-llm: {}\n", msg);
    usage(stderr);
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::optional<std::string> inline_value;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = arg.substr(eq + 1);
      arg.resize(eq);
    }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= argc) fail("missing value for " + arg);
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      usage(stdout);
      std::exit(0);
    } else if (arg == "--port") {
      auto v = to_int(value(), 0, 65535);
      if (!v) fail("--port needs a number in 0..65535");
      o.port = static_cast<int>(*v);
    } else if (arg == "--scenario") {
      o.scenario = value();
      if (!is_known_scenario(o.scenario)) fail("unknown scenario '" + o.scenario + "'");
    } else if (arg == "--dialect") {
      const std::string name = value();
      auto d = parse_dialect(name);
      if (!d) fail("unknown dialect '" + name + "'");
      o.dialect = *d;
    } else if (arg == "--record") {
      o.record_file = value();
    } else if (arg == "--delay-ms") {
      auto v = to_int(value(), 0, 600000);
      if (!v) fail("--delay-ms needs a number in 0..600000");
      o.delay_ms = *v;
    } else if (arg == "--max-threads") {
      auto v = to_int(value(), 1, 100000);
      if (!v) fail("--max-threads needs a number in 1..100000");
      o.max_threads = static_cast<size_t>(*v);
    } else if (arg == "--models") {
      const std::string path = value();
      std::FILE *f = std::fopen(path.c_str(), "rb");
      if (!f) fail("cannot read --models file '" + path + "'");
      std::string text;
      char buf[65536];
      for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
      std::fclose(f);
      std::string error;
      if (!load_model_catalog(text, o.models, error)) fail("--models file: " + error);
    } else if (arg == "--model-info") {
      const std::string mode = value();
      if (mode == "ok") o.model_info = ModelInfoMode::Ok;
      else if (mode == "malformed") o.model_info = ModelInfoMode::Malformed;
      else if (mode == "missing") o.model_info = ModelInfoMode::Missing;
      else fail("--model-info is ok, malformed or missing");
    } else if (arg == "--models-delay-ms") {
      auto v = to_int(value(), 0, 600000);
      if (!v) fail("--models-delay-ms needs a number in 0..600000");
      o.models_delay_ms = *v;
    } else if (arg == "--refuse-wire") {
      o.refuse_wire = value();
      if (o.refuse_wire != "chat" && o.refuse_wire != "responses") fail("--refuse-wire is chat or responses");
    } else if (arg == "--refuse-style") {
      o.refuse_style = value();
      if (o.refuse_style != "not-found" && o.refuse_style != "cache-key")
        fail("--refuse-style is not-found or cache-key");
    } else if (arg == "--exit-on-stdin-eof") {
      o.exit_on_stdin_eof = true;
    } else {
      fail("unknown argument '" + arg + "'");
    }
  }
  return o;
}

// Exposes the listening socket so the accept backlog can be raised: the packaged library
// listens with a backlog of 5, which makes bursts of hundreds of connects wait on SYN retries.
class MockServer : public httplib::Server {
public:
  int listen_fd() const { return svr_sock_; }
};

ServerState g_state;

// Exit paths (signal, stdin EOF) skip destructors on purpose: worker threads may still be
// streaming, and nothing needs tearing down beyond flushing the record file.
[[noreturn]] void exit_now(int code) {
  g_state.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code);
}

void set_json(httplib::Response &res, int status, const std::string &body) {
  res.status = status;
  res.set_content(body, "application/json");
}

enum class Wire { Chat, Responses };

// httplib runs a route and the error handler on the same connection thread; this tells the
// error handler that an empty error body is deliberate (`status body=none`).
thread_local bool t_bodyless_error = false;

void write_http_error(const HttpError &error, httplib::Response &res) {
  for (const auto &[k, v] : error.headers) res.set_header(k, v);
  res.status = error.status;
  if (error.content_type.empty()) {
    t_bodyless_error = true;
    return;
  }
  res.set_content(error.body, error.content_type);
}

bool same_header(const std::string &a, const std::string &b) {
  auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [&](char x, char y) { return lower(x) == lower(y); });
}

// The dialect's own headers, then the directive's `ratelimit=` ones, which replace any header
// of the same name.
HeaderList answer_headers(Dialect dialect, const std::string &seed, const HeaderList &extra) {
  HeaderList out = dialect_headers(dialect, seed);
  for (const auto &h : extra) {
    std::erase_if(out, [&](const auto &o) { return same_header(o.first, h.first); });
    out.push_back(h);
  }
  return out;
}

void handle_model(const Options &opt, Wire wire, const httplib::Request &req,
                  const std::string &body, httplib::Response &res) {
  static std::atomic<unsigned long long> next_chat_id{1}, next_response_id{1};
  t_bodyless_error = false;

  std::string compact, error;
  auto parsed = wire == Wire::Chat ? parse_chat_request(body, compact, error)
                                   : parse_responses_request(body, compact, error);
  g_state.record(compact.empty() ? json_string(body) : std::move(compact),
                 req.get_header_value("Authorization"), req.get_header_value("User-Agent"));
  g_state.count_request(req.remote_addr + ":" + std::to_string(req.remote_port));
  if (!parsed) {
    set_json(res, 400, error_body(error, "invalid_request_error"));
    return;
  }

  Plan plan = plan_response(*parsed, opt.scenario,
                            [](const std::string &d) { return g_state.bump(d); });
  if (plan.is_error) {
    write_http_error(plan.error, res);
    return;
  }

  ResponseContext ctx;
  ctx.created = static_cast<long long>(std::time(nullptr));
  ctx.model = parsed->model;
  ctx.include_usage = parsed->include_usage;
  ctx.prompt_tokens = plan.prompt_tokens ? static_cast<size_t>(*plan.prompt_tokens) : parsed->content_chars / 4;
  ctx.global_delay_ms = opt.delay_ms;
  if (wire == Wire::Responses) {
    ctx.serial = next_response_id.fetch_add(1);
    ctx.id = "resp_mock_" + std::to_string(ctx.serial);
    for (const auto &[k, v] : plan.headers) res.set_header(k, v);
    write_responses_answer(plan.script, ctx, parsed->stream, res);
    return;
  }
  ctx.serial = next_chat_id.fetch_add(1);
  ctx.id = "chatcmpl-mock-" + std::to_string(ctx.serial);
  ctx.dialect = plan.dialect.empty() ? opt.dialect : *parse_dialect(plan.dialect);
  for (const auto &[k, v] : answer_headers(ctx.dialect, ctx.id, plan.headers))
    res.set_header(k, v);
  write_response(plan.script, ctx, parsed->stream, res);
}

// Reads the body through a ContentReader: the plain overload caps bodies labelled
// application/x-www-form-urlencoded (curl -d's default) at 8 KiB with a 413.
// A proxy that lacks this wire: FastAPI's 404 for a route it does not have, or the 400 LiteLLM
// relays when a Chat-only backend gets a Responses-only field.
bool refuse_wire(const Options &opt, Wire wire, httplib::Response &res) {
  if (opt.refuse_wire.empty() || (opt.refuse_wire == "chat") != (wire == Wire::Chat)) return false;
  g_state.count(opt.refuse_wire + " refused");
  if (opt.refuse_style == "cache-key")
    set_json(res, 400,
             R"({"error":{"message":"litellm.BadRequestError: AnthropicException - {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt_cache_key: Extra inputs are not permitted\"}}","type":null,"param":null,"code":"400"}})");
  else
    set_json(res, 404, R"({"detail":"Not Found"})");
  return true;
}

httplib::Server::HandlerWithContentReader model_route(const Options &opt, Wire wire) {
  return [&opt, wire](const httplib::Request &req, httplib::Response &res,
                      const httplib::ContentReader &reader) {
    if (req.is_multipart_form_data()) {
      set_json(res, 400, error_body("expected a JSON body", "invalid_request_error"));
      return;
    }
    std::string body;
    const bool complete = reader([&body](const char *data, size_t len) {
      body.append(data, len);
      return true;
    });
    if (!complete) {
      set_json(res, 400, error_body("could not read the request body", "invalid_request_error"));
      return;
    }
    if (refuse_wire(opt, wire, res)) return;
    handle_model(opt, wire, req, body, res);
  };
}

void install_routes(MockServer &svr, const Options &opt) {
  svr.Post("/v1/chat/completions", model_route(opt, Wire::Chat));
  svr.Post("/v1/responses", model_route(opt, Wire::Responses));
  svr.Get("/v1/models", [&opt](const httplib::Request &, httplib::Response &res) {
    g_state.count("models");
    if (opt.models_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(opt.models_delay_ms));
    set_json(res, 200, opt.models.list_json);
  });
  // LiteLLM serves its details at both paths.
  auto model_info = [&opt](const httplib::Request &, httplib::Response &res) {
    g_state.count("model_info");
    if (opt.models_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(opt.models_delay_ms));
    switch (opt.model_info) {
      case ModelInfoMode::Ok: return set_json(res, 200, opt.models.info_json);
      case ModelInfoMode::Malformed: return set_json(res, 200, R"({"data":[{"model_name":"mock-model","model_info":)");
      case ModelInfoMode::Missing: return set_json(res, 404, R"({"detail":"Not Found"})");
    }
  };
  svr.Get("/model/info", model_info);
  svr.Get("/v1/model/info", model_info);
  svr.Get("/_mock/requests", [](const httplib::Request &, httplib::Response &res) {
    set_json(res, 200, g_state.requests_json());
  });
  svr.Get("/_mock/headers", [](const httplib::Request &, httplib::Response &res) {
    set_json(res, 200, g_state.headers_json());
  });
  svr.Get("/_mock/stats", [](const httplib::Request &, httplib::Response &res) {
    set_json(res, 200, g_state.stats_json());
  });
  svr.Post("/_mock/reset", [](const httplib::Request &, httplib::Response &res) {
    g_state.reset();
    set_json(res, 200, R"({"ok":true})");
  });
  // A POST with neither Content-Length nor chunked encoding (plain `curl -X POST`) has no body;
  // answer it here, before httplib would try to read a body until the connection closes.
  svr.set_pre_routing_handler([](const httplib::Request &req, httplib::Response &res) {
    if (req.method != "POST" || req.has_header("Content-Length") ||
        req.has_header("Transfer-Encoding"))
      return httplib::Server::HandlerResponse::Unhandled;
    if (req.path == "/_mock/reset") {
      g_state.reset();
      set_json(res, 200, R"({"ok":true})");
    } else {
      set_json(res, 400, error_body("request body is missing", "invalid_request_error"));
    }
    return httplib::Server::HandlerResponse::Handled;
  });
  // Give unknown routes an OpenAI-style body; leave responses that already have one alone.
  svr.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request &req, httplib::Response &res) {
    if (std::exchange(t_bodyless_error, false) || !res.body.empty() ||
        res.is_chunked_content_provider_ || res.content_length_ > 0)
      return httplib::Server::HandlerResponse::Unhandled;
    set_json(res, res.status,
             error_body(fmt::format("{} {} -> HTTP {} (mock)", req.method, req.path, res.status),
                        "invalid_request_error"));
    return httplib::Server::HandlerResponse::Handled;
  }));
  svr.set_exception_handler(
      [](const httplib::Request &, httplib::Response &res, std::exception_ptr ep) {
        std::string what = "unknown exception";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception &e) {
          what = e.what();
        } catch (...) {
        }
        set_json(res, 500, error_body("mock-llm internal error: " + what, "server_error"));
      });
}

// Signals are blocked in every thread and consumed here, so no async-signal-safety concerns.
void start_signal_thread(const sigset_t &set) {
  std::thread([set] {
    int sig = 0;
    while (sigwait(&set, &sig) != 0) {
    }
    exit_now(0);
  }).detach();
}

void start_stdin_watcher() {
  std::thread([] {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR)) exit_now(0);
    }
  }).detach();
}

} // namespace

int main(int argc, char **argv) {
  const Options opt = parse_args(argc, argv);

  // Block before any thread exists so every thread inherits the mask.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN); // a client closing mid-write must not kill the server
  start_signal_thread(set);

  if (!opt.record_file.empty() && !g_state.open_record_file(opt.record_file)) {
    fmt::print(stderr, "mock-llm: cannot open record file '{}'\n", opt.record_file);
    return 1;
  }

  MockServer svr;
  const size_t max_threads = opt.max_threads;
  svr.new_task_queue = [max_threads] { return new ElasticPool(max_threads); };
  svr.set_tcp_nodelay(true); // each SSE event must leave immediately
  svr.set_socket_options([](socket_t sock) {
    int yes = 1; // not SO_REUSEPORT (httplib's default): a taken --port must fail loudly
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  svr.set_keep_alive_max_count(1'000'000);
  svr.set_keep_alive_timeout(5);
  svr.set_read_timeout(30);
  svr.set_write_timeout(60);
  install_routes(svr, opt);

  int port = opt.port;
  if (port == 0) {
    port = svr.bind_to_any_port("127.0.0.1");
  } else if (!svr.bind_to_port("127.0.0.1", port)) {
    port = -1;
  }
  if (port <= 0) {
    fmt::print(stderr, "mock-llm: cannot listen on 127.0.0.1:{}\n", opt.port);
    return 1;
  }
  ::listen(svr.listen_fd(), 4096); // re-listen only raises the backlog on Linux

  fmt::print("http://127.0.0.1:{}/v1\n", port);
  std::fflush(stdout);
  // Only after the URL is out, so a parent that closes stdin early still learns the port.
  if (opt.exit_on_stdin_eof) start_stdin_watcher();

  const bool ok = svr.listen_after_bind();
  exit_now(ok ? 0 : 1);
}
