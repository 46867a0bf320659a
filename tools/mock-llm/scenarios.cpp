#include "tools/mock-llm/scenarios.hpp"

#include "tools/mock-llm/dialects.hpp"
#include "tools/mock-llm/fault_scenarios.hpp"
#include "tools/mock-llm/text_util.hpp"

#include <algorithm>

namespace mockllm {
namespace {

constexpr std::string_view kDefaultText = "Hello from mock-llm. This is a streamed answer.";
constexpr long long kMaxDeltas = 1'000'000;
constexpr long long kMaxDelayMs = 600'000;
constexpr long long kMaxQuote = 1'000'000;

using Builder = Script (*)(const ChatRequest &, const Directive &);

// --- helpers ------------------------------------------------------------------------------------

// Text split into exactly `k` non-empty deltas; short texts are padded by repeating their words.
std::vector<std::string> text_deltas(std::string text, size_t k) {
  if (text.empty()) text = std::string(kDefaultText);
  const auto words = split_words(text);
  for (size_t w = 0; utf8_length(text) < k; ++w) {
    text += ' ';
    text += trim(words[w % words.size()]);
  }
  return split_even(text, k);
}

void add_words(Script &s, std::string_view text) {
  for (auto &w : split_words(text)) s.content(std::move(w));
}

// Follow-up answer after a tool ran: a fixed prefix, then what the tool returned (its first
// `quote=N` code points, 200 by default).
Script tool_result_script(const ChatRequest &req, std::string_view prefix, const Directive &d) {
  Script s;
  s.role();
  s.content(std::string(prefix));
  const auto quote = static_cast<size_t>(d.int_param("quote", 200, 0, kMaxQuote));
  const std::string_view output = trim(utf8_prefix(req.messages.back().text, quote));
  if (!output.empty()) s.content(std::string(output));
  s.finish("stop");
  return s;
}

Script fixed_text_script(std::string_view text) {
  Script s;
  s.role();
  add_words(s, text);
  s.finish("stop");
  return s;
}

// One tool call streamed OpenAI-style: a start chunk, then the arguments in two halves.
Script single_tool_script(std::string_view preamble, std::string id, std::string name,
                          const std::string &arguments) {
  Script s;
  s.role();
  s.content(std::string(preamble));
  s.tool_start(0, std::move(id), std::move(name));
  const size_t half = utf8_boundary_at_or_before(arguments, arguments.size() / 2);
  s.tool_args(0, arguments.substr(0, half));
  s.tool_args(0, arguments.substr(half));
  s.finish("tool_calls");
  return s;
}

std::string shell_arguments(std::string_view command, long long timeout_ms = 10000) {
  std::string args = R"({"command":["bash","-lc",)";
  append_json_string(args, command);
  args += R"(],"timeout_ms":)" + std::to_string(timeout_ms) + "}";
  return args;
}

// `argv=a b c`: the command as these words, run directly (no shell).
std::string argv_arguments(std::string_view words, long long timeout_ms) {
  std::string args = R"({"command":[)";
  bool first = true;
  for (auto &w : split_words(words)) {
    const std::string_view word = trim(w);
    if (word.empty()) continue;
    if (!first) args += ',';
    first = false;
    append_json_string(args, word);
  }
  args += R"(],"timeout_ms":)" + std::to_string(timeout_ms) + "}";
  return args;
}

// --- scenarios ------------------------------------------------------------------------------------

// Asked for structured output, the answer is a value of the schema.
Script sc_text(const ChatRequest &req, const Directive &d) {
  if (!req.schema_answer.empty()) return fixed_text_script(req.schema_answer);
  return text_script(d, 4);
}

Script sc_echo(const ChatRequest &req, const Directive &) {
  const Message *user = req.last_with_role("user");
  const std::string answer = "echo: " + strip_directive(user ? user->text : std::string());
  Script s;
  s.role();
  for (auto &piece : split_even(answer, 3)) s.content(std::move(piece));
  s.finish("stop");
  return s;
}

// `cmd=...` (rest of line, run with bash -lc) or `argv=...` (rest of line, words run directly);
// `timeout_ms=N` (default 10000) and `quote=N` go before them.
Script sc_shell(const ChatRequest &req, const Directive &d) {
  if (req.after_tool()) return tool_result_script(req, "The command printed: ", d);
  const long long timeout_ms = d.int_param("timeout_ms", 10000, 0, kMaxDelayMs);
  if (auto argv = d.param("argv"))
    return single_tool_script("Running a command.", "call_shell_1", "shell",
                              argv_arguments(*argv, timeout_ms));
  const std::string cmd = d.param("cmd").value_or("echo hello-from-shell");
  return single_tool_script("Running a command.", "call_shell_1", "shell",
                            shell_arguments(cmd, timeout_ms));
}

// A shell call whose arguments are not valid JSON. Made once: if a later request shows the call
// was made but carries no tool result, the answer says so instead of calling again.
Script sc_badargs(const ChatRequest &req, const Directive &d) {
  constexpr std::string_view kPreamble = "Calling with broken arguments.";
  if (req.after_tool()) return tool_result_script(req, "Tool said: ", d);
  for (const auto &m : req.messages)
    if (m.role == "assistant" && m.text == kPreamble) return fixed_text_script("No tool result came back.");
  return single_tool_script(kPreamble, "call_bad_1", "shell",
                            R"({"command":)");
}

// A call to a tool nobody offered.
Script sc_unknown_tool(const ChatRequest &req, const Directive &d) {
  if (req.after_tool()) return tool_result_script(req, "Tool said: ", d);
  return single_tool_script("Calling a tool that does not exist.", "call_frob_1", "frobnicate",
                            R"({"x":1})");
}

// `name=<tool> args=<JSON, rest of line>`: one call of a named tool (an MCP tool, say). A tool
// the request does not offer is not called: the answer says so, so a test sees it.
Script sc_tool(const ChatRequest &req, const Directive &d) {
  if (req.after_tool()) return tool_result_script(req, "Tool said: ", d);
  const std::string name = d.param("name").value_or("");
  if (std::find(req.tools.begin(), req.tools.end(), name) == req.tools.end())
    return fixed_text_script("The tool " + name + " was not offered.");
  return single_tool_script("Calling a tool.", "call_tool_1", name, d.param("args").value_or("{}"));
}

// A small task in three steps, one per request: look around with a command, add a file with a
// patch, then answer saying what was done (the demo). `file=` names the file (notes.md).
Script sc_task(const ChatRequest &req, const Directive &d) {
  size_t tool_results = 0;
  for (const auto &m : req.messages) tool_results += m.role == "tool";
  const std::string file = d.param("file").value_or("notes.md");
  if (tool_results == 0)
    return single_tool_script("Let me look at the workspace first.", "call_task_1", "shell",
                              shell_arguments("ls -la && echo files: $(ls | wc -l)"));
  if (tool_results == 1) {
    const std::string input = "*** Begin Patch\n*** Add File: " + file +
                              "\n+# Notes\n+\n+Written by the agent after looking at the workspace.\n*** End Patch\n";
    std::string args = R"({"input":)";
    append_json_string(args, input);
    args += '}';
    return single_tool_script("Now I will write the notes.", "call_task_2", "apply_patch", args);
  }
  return fixed_text_script("Done: I listed the workspace and wrote " + file + " with a short note.");
}

Script sc_apply_patch(const ChatRequest &req, const Directive &d) {
  if (req.after_tool()) return tool_result_script(req, "Patch result: ", d);
  const std::string file = d.param("file").value_or("hello.txt");
  // `replace=TEXT`: update the file, its line `hello from mock-llm` becoming TEXT.
  const auto replace = d.param("replace");
  const std::string input =
      replace ? "*** Begin Patch\n*** Update File: " + file + "\n@@\n-hello from mock-llm\n+" + *replace + "\n*** End Patch\n"
              : "*** Begin Patch\n*** Add File: " + file + "\n+hello from mock-llm\n*** End Patch\n";
  std::string args = R"({"input":)";
  append_json_string(args, input);
  args += '}';
  return single_tool_script("Applying a patch.", "call_patch_1", "apply_patch", args);
}

// One shell call whose arguments stream in `fragments=N` pieces (default 100): the tool-call
// fragment path at volume, for the benchmark.
Script sc_toolstream(const ChatRequest &req, const Directive &d) {
  if (req.after_tool()) return fixed_text_script("Done.");
  const auto n = static_cast<size_t>(d.int_param("fragments", 100, 1, kMaxDeltas));
  const std::string args = R"({"command":["echo",")" + std::string(n * 8, 'x') + R"("]})";
  Script s;
  s.role();
  s.tool_start(0, "call_stream_1", "shell");
  for (auto &piece : split_even(args, n)) s.tool_args(0, std::move(piece));
  s.finish("tool_calls");
  return s;
}

// `plan [updates=2]`: one update_plan call, or a second one that completes every step.
Script sc_plan(const ChatRequest &req, const Directive &d) {
  size_t tool_results = 0;
  for (const auto &m : req.messages) tool_results += m.role == "tool";
  if (tool_results == 1 && d.int_param("updates", 1, 1, 2) == 2)
    return single_tool_script(
        "Both steps are done.", "call_plan_2", "update_plan",
        R"({"plan":[{"step":"Write code","status":"completed"},{"step":"Test it","status":"completed"}]})");
  if (tool_results > 0) return fixed_text_script("Plan updated.");
  return single_tool_script(
      "Updating the plan.", "call_plan_1", "update_plan",
      R"({"explanation":"mock plan","plan":[{"step":"Write code","status":"in_progress"},)"
      R"({"step":"Test it","status":"pending"}]})");
}

Script sc_parallel(const ChatRequest &req, const Directive &) {
  if (req.after_tool()) return fixed_text_script("Both commands ran.");
  Script s;
  s.role();
  s.tool_start(0, "call_shell_1", "shell");
  s.tool_start(1, "call_shell_2", "shell");
  s.tool_args(0, shell_arguments("echo one"));
  s.tool_args(1, shell_arguments("echo two"));
  s.finish("tool_calls");
  return s;
}

Script sc_long(const ChatRequest &, const Directive &d) {
  Script s;
  s.role();
  const long long k = d.int_param("deltas", 2000, 1, kMaxDeltas);
  s.events.reserve(static_cast<size_t>(k) + 2);
  for (long long i = 0; i < k; ++i) s.content("tok" + std::to_string(i) + " ");
  s.finish("stop");
  return s;
}

Script sc_slow(const ChatRequest &, const Directive &d) {
  const long long delay = d.int_param("delay_ms", 100, 0, kMaxDelayMs);
  Script base = text_script(d, 5);
  Script s;
  for (auto &e : base.events) {
    s.sleep(delay);
    s.add(std::move(e));
  }
  return s;
}

Script sc_hang(const ChatRequest &, const Directive &) {
  Script s;
  s.role();
  s.hang();
  return s;
}

Script sc_cut(const ChatRequest &, const Directive &) {
  Script s;
  s.role();
  s.content("Partial ").content("answer ").content("before cut");
  s.cut();
  return s;
}

Script sc_malformed(const ChatRequest &, const Directive &) {
  Script s;
  s.role();
  s.content("Valid ");
  s.raw("data: {not json\n\n");
  s.content("text ");
  s.raw("data: [1,2,3]\n\n");
  s.raw("event: ping\n\n");
  s.raw(": keep-alive\n\n");
  s.add(Event(EventKind::NoChoices));
  s.content("survives.");
  s.finish("stop");
  return s;
}

Script sc_stream_error(const ChatRequest &, const Directive &) {
  static const std::string body =
      error_body("Upstream provider failed (mock)", "server_error");
  Script s;
  s.role();
  s.content("Partial ").content("output ");
  // Chat clients get `data: <body>` and then [DONE]; the Responses wire a response.failed.
  s.stream_error(body, "server_error", "Upstream provider failed (mock)", true);
  s.non_stream_status = 500;
  s.non_stream_error_body = body;
  return s;
}

Script sc_reasoning(const ChatRequest &, const Directive &) {
  Script s;
  s.role();
  s.reasoning("Thinking about it. ").reasoning("Done thinking.");
  add_words(s, "Answer after reasoning.");
  s.finish("stop");
  return s;
}

// Error scenarios are decided in plan_response; these entries only make the names known.
Script sc_unused(const ChatRequest &, const Directive &) { return Script{}; }

struct Entry {
  std::string name;
  Builder build;
};

const std::vector<Entry> &registry() {
  static const std::vector<Entry> entries = {
      {"text", sc_text},         {"echo", sc_echo},
      {"shell", sc_shell},       {"apply_patch", sc_apply_patch},
      {"plan", sc_plan},         {"parallel", sc_parallel},
      {"long", sc_long},         {"slow", sc_slow},
      {"hang", sc_hang},         {"error429", sc_unused},
      {"error500", sc_unused},   {"error400", sc_unused},
      {"cut", sc_cut},           {"malformed", sc_malformed},
      {"stream_error", sc_stream_error}, {"reasoning", sc_reasoning},
      {"badargs", sc_badargs},   {"unknown_tool", sc_unknown_tool},
      {"toolstream", sc_toolstream}, {"tool", sc_tool}, {"task", sc_task},
      // Fault injection (fault_scenarios.cpp); status, error_chunk and context_length are
      // decided in plan_fault.
      {"status", sc_unused},     {"headers_only", sc_headers_only},
      {"close_each", sc_close_each}, {"huge", sc_huge},
      {"bytewise", sc_bytewise}, {"non_utf8", sc_non_utf8},
      {"empty", sc_empty},       {"no_finish", sc_no_finish},
      {"length", sc_length},     {"error_chunk", sc_unused},
      {"content_filter", sc_content_filter}, {"context_length", sc_unused},
  };
  return entries;
}

} // namespace

Script text_script(const Directive &d, long long default_deltas) {
  Script s;
  s.role();
  const auto k = static_cast<size_t>(d.int_param("deltas", default_deltas, 1, kMaxDeltas));
  for (auto &piece : text_deltas(d.param("text").value_or(std::string(kDefaultText)), k))
    s.content(std::move(piece));
  s.finish("stop");
  return s;
}

bool should_fail(const Directive &d, const TimesCounter &counter) {
  if (!d.param("times")) return true;
  const long long n = d.int_param("times", 0, 0, 1LL << 40);
  return counter(d.raw) < n;
}

Script &Script::tool_start(int index, std::string id, std::string name) {
  Event e(EventKind::ToolStart);
  e.index = index;
  e.id = std::move(id);
  e.name = std::move(name);
  return add(std::move(e));
}

Script &Script::tool_args(int index, std::string part) {
  Event e(EventKind::ToolArgs, std::move(part));
  e.index = index;
  return add(std::move(e));
}

Script &Script::stream_error(std::string chat_json, std::string code, std::string message,
                             bool response_failed) {
  Event e(EventKind::StreamError, std::move(chat_json));
  e.code = std::move(code);
  e.message = std::move(message);
  e.response_failed = response_failed;
  return add(std::move(e));
}

Script &Script::sleep(long long ms) {
  Event e(EventKind::Sleep);
  e.ms = ms;
  return add(std::move(e));
}

bool Script::completes() const {
  return std::none_of(events.begin(), events.end(), [](const Event &e) {
    return e.kind == EventKind::Cut || e.kind == EventKind::Hang;
  });
}

size_t Script::content_deltas() const {
  return static_cast<size_t>(std::count_if(events.begin(), events.end(), [](const Event &e) {
    return e.kind == EventKind::Content && !e.text.empty();
  }));
}

std::string error_body(std::string_view message, std::string_view type, std::string_view code) {
  std::string out = R"({"error":{"message":)";
  append_json_string(out, message);
  out += R"(,"type":)";
  append_json_string(out, type);
  if (!code.empty()) {
    out += R"(,"code":)";
    append_json_string(out, code);
  }
  out += "}}";
  return out;
}

std::vector<std::pair<std::string, std::string>> rate_limit_headers(const std::string &family,
                                                                    long long remaining) {
  const std::string req = std::to_string(remaining);
  const std::string tok = std::to_string(remaining * 100);
  if (family == "openai")
    return {{"x-ratelimit-limit-requests", "100"}, {"x-ratelimit-remaining-requests", req},
            {"x-ratelimit-reset-requests", "6m0s"}, {"x-ratelimit-limit-tokens", "10000"},
            {"x-ratelimit-remaining-tokens", tok}, {"x-ratelimit-reset-tokens", "1s"}};
  if (family == "anthropic" || family == "litellm-anthropic") {
    const std::string p = family == "anthropic" ? "" : "llm_provider-";
    return {{p + "anthropic-ratelimit-requests-limit", "100"},
            {p + "anthropic-ratelimit-requests-remaining", req},
            {p + "anthropic-ratelimit-requests-reset", "2030-01-01T00:00:00Z"},
            {p + "anthropic-ratelimit-tokens-limit", "10000"},
            {p + "anthropic-ratelimit-tokens-remaining", tok}};
  }
  if (family == "llmx")
    return {{"x-llmx-primary-used-percent", std::to_string(100 - remaining)},
            {"x-llmx-primary-window-minutes", "300"}, {"x-llmx-primary-reset-at", "1893456000"}};
  return {};
}

bool is_known_scenario(const std::string &name) {
  const auto &r = registry();
  return std::any_of(r.begin(), r.end(), [&](const Entry &e) { return e.name == name; });
}

const std::vector<std::string> &scenario_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto &e : registry()) out.push_back(e.name);
    return out;
  }();
  return names;
}

Plan plan_response(const ChatRequest &req, const std::string &default_scenario,
                   const TimesCounter &times_counter) {
  Directive d;
  if (auto found = select_directive(req)) {
    d = std::move(*found);
  } else {
    d.name = default_scenario;
    d.raw = "@mock:" + default_scenario;
  }

  Plan plan;
  auto fail = [&](int status, std::string body) {
    plan.is_error = true;
    plan.error.status = status;
    plan.error.body = std::move(body);
  };

  const auto &r = registry();
  auto it = std::find_if(r.begin(), r.end(), [&](const Entry &e) { return e.name == d.name; });
  if (it == r.end()) {
    std::string known;
    for (const auto &n : scenario_names()) known += (known.empty() ? "" : ", ") + n;
    fail(400, error_body("Unknown mock scenario '" + d.name + "' (known: " + known + ")",
                         "invalid_request_error", "unknown_scenario"));
    return plan;
  }
  if (auto dialect = d.param("dialect")) {
    if (!parse_dialect(*dialect)) {
      std::string known;
      for (const auto &n : dialect_names()) known += (known.empty() ? "" : ", ") + n;
      fail(400, error_body("Unknown mock dialect '" + *dialect + "' (known: " + known + ")",
                           "invalid_request_error", "unknown_dialect"));
      return plan;
    }
    plan.dialect = *dialect;
  }

  if (d.name == "error429") {
    if (should_fail(d, times_counter)) {
      fail(429, error_body("Rate limit exceeded (mock)", "rate_limit_error",
                           "rate_limit_exceeded"));
      plan.error.headers.emplace_back("Retry-After", "1");
      if (auto family = d.param("ratelimit"))  // a 429 says how exhausted the limits are
        for (auto &h : rate_limit_headers(*family, d.int_param("ratelimit_remaining", 0, 0, 100)))
          plan.error.headers.push_back(std::move(h));
      return plan;
    }
    plan.script = text_script(d, 4);
  } else if (d.name == "error500") {
    if (should_fail(d, times_counter)) {
      fail(500, error_body("Internal server error (mock)", "server_error", "internal_error"));
      return plan;
    }
    plan.script = text_script(d, 4);
  } else if (d.name == "error400") {
    fail(400, error_body("Invalid request (mock): bad field", "invalid_request_error"));
  } else if (d.name == "cut") {
    plan.script = should_fail(d, times_counter) ? sc_cut(req, d) : text_script(d, 4);
  } else if (plan_fault(req, d, times_counter, plan)) {
    if (plan.is_error) return plan;
  } else {
    plan.script = it->build(req, d);
  }
  if (auto family = d.param("ratelimit"))
    plan.headers = rate_limit_headers(*family, d.int_param("ratelimit_remaining", 75, 0, 100));
  // `think=WORD` on any scenario: the answer starts with reasoning (two deltas), so a tool call
  // can carry reasoning that the next request must pass back (DeepSeek, Claude).
  if (auto think = d.param("think"); think && !plan.script.events.empty()) {
    auto at = plan.script.events.begin();
    if (at->kind == EventKind::Role) ++at;
    at = plan.script.events.insert(at, Event(EventKind::Reasoning, *think + " "));
    plan.script.events.insert(at + 1, Event(EventKind::Reasoning, "done."));
  }
  if (d.param("prompt_tokens")) {
    bool applies = true;
    if (d.param("prompt_tokens_times")) {
      const long long n = d.int_param("prompt_tokens_times", 0, 0, 1LL << 40);
      applies = times_counter(d.raw + "#prompt_tokens") < n;
    }
    if (applies) plan.prompt_tokens = d.int_param("prompt_tokens", 0, 0, 1LL << 40);
  }
  return plan;
}

} // namespace mockllm
