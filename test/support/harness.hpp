// Integration-test helpers: temp dirs, the mock model server, an MCP client that drives
// `llmx mcp-server` over pipes, and `llmx exec` runs. Every wait is bounded; a helper that runs
// out of time throws std::runtime_error (with the server's stderr) so the test fails, never hangs.
#pragma once

#include "test/support/temp_dir.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/base/json_reader.hpp"
#include "test/support/child_process.hpp"

namespace llmx::test {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// A fresh directory under $TMPDIR (or /tmp), removed recursively on destruction.

// `"text"` as a JSON string literal (quoted and escaped).
std::string json_quote(std::string_view text);
inline bool contains(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

// The whole file ("" when it cannot be read).
std::string read_file(const std::string& path);
// The rollout files (`rollout-*`) under `dir`, sorted; none when it does not exist.
std::vector<std::string> rollout_files(const std::string& dir);

// GET http://host:port<path> over loopback with HTTP/1.0; returns the body, throws on any failure
// or a non-2xx status. `base_url` may carry a path (it is ignored): "http://127.0.0.1:1234/v1".
std::string http_get(std::string_view base_url, std::string_view path, Duration timeout = kDefaultTimeout);

// A port on 127.0.0.1 where nothing listens (bound once, then closed).
int closed_port();

// How much slower the engine is in this build: 3 under ASan+UBSan (LLMX_SANITIZED, as ctest's
// timeouts in test/CMakeLists.txt), else 1. Waits and timeouts a case sets scale with it.
#ifdef LLMX_SANITIZED
inline constexpr int kSlowdown = 3;
#else
inline constexpr int kSlowdown = 1;
#endif

// What mock-llm streams when the script has nothing else for a request.
inline constexpr std::string_view kMockAnswer = "Hello from mock-llm. This is a streamed answer.";

// The mock model server (MOCK_LLM_BIN) on a free port; SIGTERM on destruction.
class MockLlm {
 public:
  explicit MockLlm(std::vector<std::string> extra_args = {});
  ~MockLlm();
  const std::string& url() const { return url_; }  // http://127.0.0.1:PORT/v1
  // GET /_mock/requests: {"requests":[<chat request bodies>...]}.
  std::string requests_json();
  ChildProcess& process() { return *proc_; }

 private:
  std::unique_ptr<ChildProcess> proc_;
  std::string url_;
};

// Variables of the test's own environment that would change how llmx behaves (unset for children).
const std::vector<std::string>& llmx_vars();

// Environment for an llmx process using the mock through the default provider.
EnvVars llmx_env(const std::string& llmx_home, const std::string& base_url);

// One parsed JSON line; cheap to copy (the document is shared).
class Message {
 public:
  Message() = default;
  // Throws std::runtime_error when `line` is not valid JSON.
  explicit Message(std::string line);

  const std::string& line() const { return line_; }
  json::Element root() const { return root_; }

  // JSON pointer access ("/params/msg/type"); "" is the root.
  bool has(std::string_view pointer) const;
  json::Element at(std::string_view pointer) const;          // throws when missing
  std::string str(std::string_view pointer) const;           // a string value; throws otherwise
  int64_t integer(std::string_view pointer) const;           // an integer value; throws otherwise
  bool boolean(std::string_view pointer) const;              // a bool; throws otherwise
  std::string text(std::string_view pointer) const;          // compact JSON of the value
  std::string str_or(std::string_view pointer, std::string fallback) const;

  // JSON-RPC shape.
  bool is_request() const { return has("/method") && has("/id"); }
  bool is_notification() const { return has("/method") && !has("/id"); }
  bool is_response() const { return !has("/method") && has("/id") && (has("/result") || has("/error")); }
  bool is_error() const { return is_response() && has("/error"); }
  // JSON text, as sent (an id beyond 64 bits too: see json_repair.hpp).
  std::string id() const {
    if (const auto& raw = parser_->repaired_top_level_id()) return *raw;
    return has("/id") ? text("/id") : std::string();
  }
  std::string method() const { return str_or("/method", ""); }

  // `llmx/event` notifications.
  bool is_event() const { return method() == "llmx/event"; }
  // The event type of an `llmx/event[/<type>]` notification or of an `llmx exec --core-events` line.
  std::string event_type() const { return has("/params/msg/type") ? str("/params/msg/type") : str_or("/msg/type", ""); }
  std::string event_request_id() const { return has("/params/_meta/requestId") ? text("/params/_meta/requestId") : ""; }

  // Position in the McpClient log (0 for the first line the server wrote).
  size_t index() const { return index_; }

 private:
  friend class McpClient;
  size_t index_ = 0;
  std::string line_;
  std::shared_ptr<json::Parser> parser_;
  json::Element root_;
};

using Predicate = std::function<bool(const Message&)>;

// `llmx node` as a child process (issue 15), on a free loopback port unless `args` say otherwise;
// killed with the object (and on the test's death: it exits when its stdin closes).
class NodeProcess {
 public:
  NodeProcess(const std::string& llmx_home, const std::string& base_url, std::vector<std::string> args = {},
              EnvVars env = {});
  const std::string& address() const { return address_; }  // HOST:PORT from its `listening` line
  uint16_t port() const;
  ChildProcess& process() { return *proc_; }

 private:
  std::unique_ptr<ChildProcess> proc_;
  std::string address_;
};

// How many processes stream model requests for one server: 1, or the LLMX_TEST_NODES nodes.
int streaming_processes();

// Comma-separated addresses of these nodes, for --nodes.
std::string node_list(const std::vector<std::unique_ptr<NodeProcess>>& nodes);

struct McpOptions {
  std::string subcommand = "mcp-server";  // or "app-server" (the same JSON-RPC client serves both)
  std::vector<std::string> args;  // after the subcommand
  EnvVars env;                    // on top of llmx_env()
  std::string cwd;
};

// `tools/call` params for the `llmx` tool: `{"name":"llmx","arguments":{"prompt":...,<extra_args>}}`
// plus `"_meta":<meta>` when given. `extra_args` is JSON text without braces (`"cwd":"/tmp"`).
std::string llmx_call_params(std::string_view prompt, std::string_view extra_args = {}, std::string_view meta = {});

// `llmx mcp-server` as a child process, spoken to with JSON-RPC lines.
class McpClient {
 public:
  McpClient(const std::string& llmx_home, const std::string& base_url, McpOptions options = {});
  ~McpClient();

  // Raw line (the newline is added). Throws when the server closed its stdin.
  void send_line(std::string_view line);
  // A request with the next integer id; returns the id as JSON text ("1", "2", ...).
  std::string request(std::string_view method, std::string_view params_json = {});
  // A request with the given id (JSON text: "7" or "\"abc\"").
  void request_with_id(std::string_view id_json, std::string_view method, std::string_view params_json = {});
  void notify(std::string_view method, std::string_view params_json = {});

  // initialize + notifications/initialized; returns the initialize response. The client declares
  // elicitation, as hosts that answer approvals do.
  Message initialize(std::string_view protocol_version = "2025-06-18",
                     std::string_view capabilities = R"({"elicitation":{}})");

  // tools/call of `llmx` (see llmx_call_params); returns the request id.
  std::string call_llmx(std::string_view prompt, std::string_view extra_args = {}, std::string_view meta = {});
  std::string call_reply(std::string_view conversation_id, std::string_view prompt);

  // The next message after the cursor (nullopt on timeout or EOF); advances the cursor.
  std::optional<Message> next(Duration timeout = kDefaultTimeout);
  // The first message of the whole log that matches, reading more as needed; the cursor moves
  // past it (if it was not already). Throws on timeout.
  Message wait_for(const Predicate& pred, std::string_view what, Duration timeout = kDefaultTimeout);
  Message wait_for_response(std::string_view id_json, Duration timeout = kDefaultTimeout);
  // Messages from the cursor on until one matches `until` (included). Throws on timeout.
  std::vector<Message> collect_until(const Predicate& until, std::string_view what,
                                     Duration timeout = kDefaultTimeout);
  // Reads everything that arrives within `quiet` (nothing is an error).
  void drain(Duration quiet);

  // Every message received so far, in order.
  const std::vector<Message>& log() const { return log_; }
  // The `llmx/event` notifications of the log whose _meta.requestId is `id_json`, in order.
  std::vector<Message> events_for(std::string_view id_json) const;
  // Responses in the log with this id (to check "exactly one reply" / "no reply").
  std::vector<Message> responses_for(std::string_view id_json) const;

  // Answers a request the server sent us (elicitation/create): a result, or a JSON-RPC error.
  void respond(std::string_view id_json, std::string_view result_json);
  void respond_error(std::string_view id_json, int code, std::string_view message);

  // From now on, lines containing `needle` are counted and thrown away instead of parsed and
  // logged (for floods of output deltas that would cost the test gigabytes). "" turns it off.
  void drop_lines_containing(std::string needle) { drop_needle_ = std::move(needle); }
  size_t dropped_lines() const { return dropped_lines_; }
  size_t dropped_bytes() const { return dropped_bytes_; }

  void close_stdin() { proc_->close_stdin(); }
  ExitStatus wait_exit(Duration timeout = kDefaultTimeout);
  ChildProcess& process() { return *proc_; }
  // A description of the server state for failure messages (stderr, last lines).
  std::string diagnostics();

 private:
  bool read_one(Duration timeout);  // appends to log_; false on timeout/EOF
  void record(std::string_view from, std::string_view line);  // LLMX_TRAFFIC_LOG
  bool app_server_ = false;
  bool acp_ = false;

  // LLMX_TEST_NODES=N: the server places its conversations on N worker nodes of its own (the
  // integration suite run once more against a front; issue 15). Declared first: they outlive
  // the server's shutdown.
  std::vector<std::unique_ptr<NodeProcess>> nodes_;
  std::unique_ptr<ChildProcess> proc_;
  std::vector<Message> log_;
  size_t cursor_ = 0;
  int64_t next_id_ = 1;
  std::string drop_needle_;
  size_t dropped_lines_ = 0, dropped_bytes_ = 0;
};

// A temp LLMX_HOME, a mock model server and an `llmx mcp-server` using both.
struct McpServerFixture {
  TempDir home{"llmx-mcp"};
  MockLlm mock;
  McpClient mcp;
  explicit McpServerFixture(McpOptions options = {}) : mcp(home.path(), mock.url(), std::move(options)) {}
};

// The same, past the MCP initialize handshake.
struct InitializedMcp : McpServerFixture {
  explicit InitializedMcp(McpOptions options = {}) : McpServerFixture(std::move(options)) { mcp.initialize(); }
};

// McpOptions for `llmx app-server` (the same client speaks it; lines carry no "jsonrpc").
McpOptions app_server_options(McpOptions base = {});

// A temp LLMX_HOME, a work directory, a mock model server and an `llmx app-server`.
struct AppServerFixture {
  TempDir home{"llmx-app"};
  TempDir work{"llmx-app-work"};
  MockLlm mock;
  McpClient c;
  explicit AppServerFixture(McpOptions options = {}, std::vector<std::string> mock_args = {})
      : mock(std::move(mock_args)), c(home.path(), mock.url(), app_server_options(std::move(options))) {}
  // `initialize` with a client name and version; fails the test on an error reply.
  void initialize();
  // `thread/start` with these params; returns the thread id.
  std::string start_thread(const std::string& params = "{}");
  // The reply to one request (params JSON text, "" for none).
  Message call(std::string_view method, std::string_view params = {}) { return c.wait_for_response(c.request(method, params)); }
};

// MCP tool results: result.content[0].text, result.isError == true.
std::string result_text(const Message& response);
// The length of the array at `pointer` (fails the test when it is not an array).
size_t array_size(const Message& m, std::string_view pointer);
bool result_is_error(const Message& response);
// The agent_message_delta deltas of these llmx/event notifications, concatenated in order.
std::string joined_deltas(const std::vector<Message>& events);
std::vector<Message> events_of_type(const std::vector<Message>& events, std::string_view type);
// A notification or request of this method.
inline bool is_method(const Message& m, std::string_view method) { return m.method() == method; }

// The outcome of `llmx exec`.
struct ExecResult {
  ExitStatus status;
  std::string out, err;
};

// Runs `llmx <args...>` to completion with stdin closed.
ExecResult run_llmx(const std::vector<std::string>& args, const EnvVars& env, Duration timeout = kDefaultTimeout,
                    const std::string& cwd = {});
// The same, with the llmx binary at `binary` (a copy somewhere else).
ExecResult run_llmx_at(const std::string& binary, const std::vector<std::string>& args, const EnvVars& env,
                       Duration timeout = kDefaultTimeout, const std::string& cwd = {});
// Where the llmx binary under test is.
std::string llmx_binary();

// `llmx exec --core-events <flags...> -- <prompt>` to completion: the result and its event lines.
struct ExecJson {
  ExecResult raw;
  std::vector<Message> events;
  bool ok() const { return raw.status.exited && raw.status.code == 0; }
  // "" for a run that exited 0 with task_complete last; otherwise what went wrong, with stderr.
  std::string problem() const;
  // task_complete's last_agent_message ("" when the last event is something else).
  std::string last_message() const {
    return events.empty() ? "" : events.back().str_or("/msg/last_agent_message", "");
  }
};
ExecJson run_exec_json(const std::vector<std::string>& flags, const std::string& prompt, const EnvVars& env,
                       Duration timeout = kDefaultTimeout, const std::string& cwd = {});

// Splits text into lines (without the '\n'); a trailing newline adds no empty line.
std::vector<std::string> split_lines(std::string_view text);

// Every line of `text` parsed as JSON (`llmx exec --core-events` output); throws on a bad line.
std::vector<Message> parse_json_lines(std::string_view text);

// GET /_mock/requests, parsed: {"requests":[<chat request bodies>...]}.
Message recorded_requests(MockLlm& mock);
// The `content` of every role:"tool" message of chat request `index` (-1: the last request).
std::vector<std::string> tool_messages(const Message& requests, long index = -1);

// --- processes ----------------------------------------------------------------------------------

// Pids of live (non-zombie) processes whose command line is exactly `argv`.
std::vector<pid_t> processes_with_argv(const std::vector<std::string>& argv);
// SIGKILLs every process with exactly this command line (cleanup of what a test started, so a
// failed run cannot poison the next one; use command lines unique to the test).
void kill_processes_with_argv(const std::vector<std::string>& argv);
// Waits until no process has this exact command line; false when some remain after `timeout`.
bool wait_until_no_process(const std::vector<std::string>& argv, Duration timeout = kDefaultTimeout);
// Until at least `count` processes run exactly `argv` (false when `timeout` passes first).
bool wait_until_running(const std::vector<std::string>& argv, size_t count, Duration timeout = kDefaultTimeout);

// `sleep <seconds>.<pid><n>`: a command line no other test process runs (the schema test runs
// the suite again while ctest runs it too), so process scans only find this run's children.
std::vector<std::string> unique_sleep(int seconds);

// Kills leftovers with this exact command line when the test ends, whatever happened: a run that
// failed (or a server that crashed) must not leave them for the next run to trip over.
struct ProcessSweeper {
  std::vector<std::string> argv;
  ~ProcessSweeper() { kill_processes_with_argv(argv); }
};
// VmHWM (peak resident set) of a live process in KiB, from /proc/<pid>/status; -1 if unknown.
long peak_rss_kib(pid_t pid);

}  // namespace llmx::test
