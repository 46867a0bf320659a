// `llmx exec`: one task against the mock, the answer (or JSON events) on stdout, errors on stderr.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <thread>

#include <unistd.h>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;

namespace {

// The `error:` lines of stderr, among the progress shown to people.
std::vector<std::string> error_lines(const std::string& err) {
  std::vector<std::string> lines;
  for (auto& l : split_lines(err))
    if (l.starts_with("error: ")) lines.push_back(l);
  return lines;
}

}  // namespace

TEST_CASE("exec: prints the streamed answer and exits 0") {
  TempDir home;
  MockLlm mock;
  auto r = run_llmx({"exec", "--skip-git-repo-check", "@mock:text deltas=5"}, llmx_env(home.path(), mock.url()));
  INFO("stderr: " << r.err);
  CHECK(r.status.describe() == "exit code 0");
  CHECK(r.out == std::string(kMockAnswer) + "\n");
  // Progress for people on stderr: the header, then the tokens used.
  CHECK(r.err.starts_with("llmx "));
  CHECK(contains(r.err, "\nmodel: "));
  CHECK(contains(r.err, "\nthread id: "));
  CHECK(contains(r.err, "tokens used: "));
  CHECK_FALSE(contains(r.err, "\x1b["));  // no colours when stderr is not a terminal
}

TEST_CASE("exec: --core-events prints one event object per line from session_configured to task_complete") {
  TempDir home;
  MockLlm mock;
  auto r = run_llmx({"exec", "--skip-git-repo-check", "--core-events", "@mock:text deltas=5"}, llmx_env(home.path(), mock.url()));
  INFO("stderr: " << r.err);
  CHECK(r.status.describe() == "exit code 0");
  REQUIRE(!r.out.empty());
  CHECK(r.out.back() == '\n');
  std::vector<Message> events;
  for (const auto& line : split_lines(r.out)) {
    CAPTURE(line);
    REQUIRE_NOTHROW(events.emplace_back(line));
    CHECK(events.back().root().is_object());
    CHECK(events.back().has("/id"));
    CHECK(events.back().at("/msg/type").is_string());
  }
  REQUIRE(events.size() >= 3);
  CHECK(events.front().str("/msg/type") == "session_configured");
  CHECK(events.front().str("/id") == "");
  CHECK(events.back().str("/msg/type") == "task_complete");
  CHECK(events.back().str("/msg/last_agent_message") == kMockAnswer);
  std::string deltas;
  size_t n = 0;
  for (const auto& e : events)
    if (e.str("/msg/type") == "agent_message_delta") {
      deltas += e.str("/msg/delta");
      ++n;
    }
  CHECK(n == 5);
  CHECK(deltas == kMockAnswer);
  for (size_t i = 1; i < events.size(); ++i) CHECK(events[i].str("/id") == events[1].str("/id"));
}

TEST_CASE("exec: a failing provider exits non-zero with one error line on stderr") {
  TempDir home;
  MockLlm mock;
  auto r = run_llmx({"exec", "--skip-git-repo-check", "@mock:error400"}, llmx_env(home.path(), mock.url()));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.status.exited);
  CHECK(r.status.code != 0);
  auto lines = error_lines(r.err);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("Invalid request (mock): bad field") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("exec: connection refused exits non-zero with the reason") {
  TempDir home;
  const std::string url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/v1";
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_llmx({"exec", "--skip-git-repo-check", "-c", "model_providers.litellm.request_max_retries=0", "hello"},
                    llmx_env(home.path(), url));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
  CHECK(r.status.exited);
  CHECK(r.status.code != 0);
  auto lines = error_lines(r.err);
  REQUIRE(lines.size() == 1);
  const bool says_why = lines[0].find("onnect") != std::string::npos;  // "Connection failed", "Couldn't connect"
  CHECK(says_why);
}

TEST_CASE("exec: a broken config.toml exits non-zero before contacting the model") {
  TempDir home;
  MockLlm mock;
  home.write("config.toml", "model = [unterminated\n");
  auto r = run_llmx({"exec", "--skip-git-repo-check", "@mock:text"}, llmx_env(home.path(), mock.url()));
  INFO("stderr: " << r.err);
  CHECK(r.status.exited);
  CHECK(r.status.code != 0);
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(r.err.find("config.toml") != std::string::npos);
  CHECK(Message(mock.requests_json()).text("/requests") == "[]");
}

TEST_CASE("exec: --json (and --experimental-json) prints the SDK's event stream: thread, turn, items, usage") {
  TempDir home;
  TempDir work;
  MockLlm mock;
  for (const char* flag : {"--json", "--experimental-json"}) {
    auto r = run_llmx({"exec", "--skip-git-repo-check", flag, "-s", "danger-full-access", "@mock:shell cmd=echo from-shell"},
                      llmx_env(home.path(), mock.url()), kDefaultTimeout, work.path());
    INFO("flag " << flag << "\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.status.describe() == "exit code 0");
    auto lines = parse_json_lines(r.out);
    REQUIRE(lines.size() >= 6);
    CHECK(lines[0].str("/type") == "thread.started");
    CHECK(lines[0].str("/thread_id").size() == 36);
    CHECK(lines[1].str("/type") == "turn.started");
    std::vector<std::string> types;
    for (const auto& l : lines) types.push_back(l.str("/type") + (l.has("/item/type") ? ":" + l.str("/item/type") : ""));
    auto has = [&](const std::string& t) { return std::find(types.begin(), types.end(), t) != types.end(); };
    CHECK(has("item.started:command_execution"));
    CHECK(has("item.completed:command_execution"));
    CHECK(has("item.completed:agent_message"));
    for (const auto& l : lines)
      if (l.str("/type") == "item.completed" && l.str("/item/type") == "command_execution") {
        CHECK(l.str("/item/command") == "bash -lc 'echo from-shell'");
        CHECK(l.str("/item/aggregated_output") == "from-shell\n");
        CHECK(l.integer("/item/exit_code") == 0);
        CHECK(l.str("/item/status") == "completed");
      }
    CHECK(lines.back().str("/type") == "turn.completed");
    CHECK(lines.back().integer("/usage/input_tokens") > 0);
    CHECK(lines.back().has("/usage/cached_input_tokens"));
    CHECK(lines.back().has("/usage/output_tokens"));
  }
}

TEST_CASE("exec: --json reports a failing turn as error and turn.failed") {
  TempDir home;
  MockLlm mock;
  auto r = run_llmx({"exec", "--skip-git-repo-check", "--json", "@mock:error400"},
                    llmx_env(home.path(), mock.url()));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.status.describe() == "exit code 1");
  auto lines = parse_json_lines(r.out);
  REQUIRE(lines.size() >= 3);
  CHECK(lines[lines.size() - 2].str("/type") == "error");
  CHECK(lines.back().str("/type") == "turn.failed");
  CHECK_FALSE(lines.back().str("/error/message").empty());
}

TEST_CASE("exec: the prompt from stdin (none given, or `-`), the last message to a file, images attached") {
  TempDir home;
  TempDir work;
  MockLlm mock;
  auto env = llmx_env(home.path(), mock.url());
  for (std::vector<std::string> args : {std::vector<std::string>{"exec", "--skip-git-repo-check"}, std::vector<std::string>{"exec", "--skip-git-repo-check", "-"}}) {
    SpawnOptions o;
    o.argv = {LLMX_BIN};
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.env = env;
    ChildProcess p(std::move(o));
    p.write_stdin("@mock:echo piped prompt\n");
    p.close_stdin();
    auto out = p.read_all_stdout();
    CHECK(p.wait().describe() == "exit code 0");
    CHECK(out == "echo: piped prompt\n");
  }
  auto last = work.file("last.txt");
  auto image = work.write("dot.png", std::string("\x89PNG\r\n\x1a\n", 8));
  auto r = run_llmx({"exec", "--skip-git-repo-check", "--output-last-message", last, "--image", image, "@mock:text deltas=2 text=final-words"}, env);
  INFO(r.err);
  CHECK(r.status.describe() == "exit code 0");
  CHECK(read_file(last) == "final-words");
  auto requests = recorded_requests(mock);
  CHECK(contains(requests.text("/requests"), "data:image/png;base64,"));
}

TEST_CASE("exec: usage errors exit 2, an unreadable image exits 1, each with a clear message") {
  TempDir home;
  MockLlm mock;
  auto env = llmx_env(home.path(), mock.url());
  auto unknown = run_llmx({"exec", "--skip-git-repo-check", "--no-such-flag", "hi"}, env);
  CHECK(unknown.status.describe() == "exit code 2");
  CHECK(contains(unknown.err, "--no-such-flag"));
  auto empty = run_llmx({"exec"}, env);  // stdin is closed: no prompt at all
  CHECK(empty.status.describe() == "exit code 2");
  CHECK(contains(empty.err, "a prompt is required"));
  auto image = run_llmx({"exec", "--skip-git-repo-check", "--image", home.file("missing.png"), "hi"}, env);
  CHECK(image.status.describe() == "exit code 1");
  CHECK(contains(image.err, "cannot read image"));
  // A file that is not an image is not quietly sent as text.
  auto text = run_llmx({"exec", "--skip-git-repo-check", "--image", home.write("notes.txt", "not a picture"), "hi"}, env);
  CHECK(text.status.describe() == "exit code 1");
  CHECK(contains(text.err, "not a PNG, JPEG, GIF or WebP"));
  auto cd = run_llmx({"exec", "--skip-git-repo-check", "-C", home.file("no/such/dir"), "hi"}, env);
  CHECK(cd.status.describe() == "exit code 1");
  CHECK(contains(cd.err, "does not exist or is not a directory"));
  CHECK_FALSE(recorded_requests(mock).has("/requests/0"));  // none of these reached the model
}

TEST_CASE("exec: the Codex SDK's variables work when the LLMX_* ones are absent") {
  TempDir home;
  MockLlm mock;
  auto r = run_llmx({"exec", "--skip-git-repo-check", "@mock:text deltas=2"},
                    {{"LLMX_HOME", home.path()}, {"OPENAI_BASE_URL", mock.url()}, {"CODEX_API_KEY", "sdk-key"}});
  INFO(r.err);
  CHECK(r.status.describe() == "exit code 0");
  auto requests = recorded_requests(mock);
  REQUIRE(requests.has("/requests/0"));
}

TEST_CASE("exec: outside a git repository it refuses unless given --skip-git-repo-check") {
  TempDir home;
  TempDir outside;
  MockLlm mock;
  auto env = llmx_env(home.path(), mock.url());
  auto refused = run_llmx({"exec", "@mock:text deltas=1"}, env, kDefaultTimeout, outside.path());
  CHECK(refused.status.describe() == "exit code 1");
  CHECK(contains(refused.err, "not inside a git repository"));
  CHECK(contains(refused.err, "--skip-git-repo-check"));
  CHECK(refused.out.empty());
  auto skipped = run_llmx({"exec", "--skip-git-repo-check", "@mock:text deltas=1"}, env, kDefaultTimeout, outside.path());
  CHECK(skipped.status.describe() == "exit code 0");
  // Inside a repository (a .git with a HEAD, as git makes it), no flag is needed.
  outside.write("repo/.git/HEAD", "ref: refs/heads/main\n");
  std::filesystem::create_directories(outside.file("repo/src"));
  auto inside = run_llmx({"exec", "@mock:text deltas=1"}, env, kDefaultTimeout, outside.file("repo/src"));
  CHECK(inside.status.describe() == "exit code 0");
}

TEST_CASE("exec: --output-schema asks for structured output on either wire, and the answer conforms") {
  TempDir home;
  TempDir work;
  MockLlm mock;
  auto env = llmx_env(home.path(), mock.url());
  auto schema = work.write("schema.json",
                           R"({"type":"object","properties":{"summary":{"type":"string"},"count":{"type":"integer"},)"
                           R"("ok":{"type":"boolean"}},"required":["summary","count","ok"],"additionalProperties":false})");
  auto r = run_llmx({"exec", "--skip-git-repo-check", "--output-schema", schema, "summarise @mock:text"}, env);
  INFO(r.err);
  REQUIRE(r.status.describe() == "exit code 0");
  Message answer(r.out.substr(0, r.out.find('\n')));
  CHECK(answer.str("/summary") == "mock");
  CHECK(answer.integer("/count") == 1);
  CHECK(answer.boolean("/ok"));
  auto sent = recorded_requests(mock);
  CHECK(sent.str("/requests/0/response_format/type") == "json_schema");
  CHECK(sent.str("/requests/0/response_format/json_schema/schema/properties/count/type") == "integer");
  // The Responses wire carries it as text.format.
  auto responses = run_llmx({"exec", "--skip-git-repo-check", "-c", "model_providers.litellm.wire_api=responses",
                             "--output-schema", schema, "summarise @mock:text"},
                            env);
  INFO(responses.err);
  CHECK(responses.status.describe() == "exit code 0");
  CHECK(contains(responses.out, R"("summary":"mock")"));
  auto both = recorded_requests(mock);
  CHECK(both.str("/requests/1/text/format/type") == "json_schema");
  CHECK(both.str("/requests/1/text/format/schema/required/0") == "summary");
  // Bad schema files: a clear error, exit 1.
  auto missing = run_llmx({"exec", "--skip-git-repo-check", "--output-schema", work.file("nope.json"), "x"}, env);
  CHECK(missing.status.describe() == "exit code 1");
  CHECK(contains(missing.err, "cannot read the output schema"));
  auto bad = run_llmx({"exec", "--skip-git-repo-check", "--output-schema", work.write("bad.json", "[1,"), "x"}, env);
  CHECK(bad.status.describe() == "exit code 1");
  CHECK(contains(bad.err, "is not a JSON Schema"));
}

TEST_CASE("exec: --cyber-access-program goes on the Responses wire, Chat providers and unknown programs are refused") {
  TempDir home;
  MockLlm mock;
  auto env = llmx_env(home.path(), mock.url());
  auto r = run_llmx({"exec", "--skip-git-repo-check", "-c", "model_providers.litellm.wire_api=responses",
                     "--cyber-access-program", "daybreak_blue", "@mock:text deltas=1"},
                    env);
  INFO(r.err);
  REQUIRE(r.status.describe() == "exit code 0");
  auto sent = recorded_requests(mock);
  CHECK(sent.str("/requests/0/access_programs/cyber") == "daybreak_blue");
  auto chat = run_llmx({"exec", "--skip-git-repo-check", "--cyber-access-program", "standard", "x"}, env);
  CHECK(chat.status.describe() == "exit code 2");
  CHECK(contains(chat.err, "not supported with provider `litellm`"));
  auto unknown = run_llmx({"exec", "--skip-git-repo-check", "-c", "model_providers.litellm.wire_api=responses",
                           "--cyber-access-program", "daybreak-blue", "x"},
                          env);
  CHECK(unknown.status.describe() == "exit code 2");
  CHECK(contains(unknown.err, "daybreak-blue"));
  CHECK_FALSE(recorded_requests(mock).has("/requests/1"));  // neither refusal reached the model
}

TEST_CASE("exec: on a terminal (tmux) a person sees the header, the command, colours and the answer") {
  TempDir home;
  TempDir work;
  MockLlm mock;
  const std::string socket = "llmx-exec-test-" + std::to_string(::getpid());
  auto tmux = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"-L", socket});
    args.insert(args.begin(), "/usr/bin/tmux");
    SpawnOptions o;
    o.argv = args;
    ChildProcess p(std::move(o));
    p.close_stdin();
    auto out = p.read_all_stdout();
    p.wait();
    return out;
  };
  struct Cleanup {
    std::function<void()> f;
    ~Cleanup() { f(); }
  } cleanup{[&] { tmux({"kill-server"}); }};
  std::string command = "env LLMX_HOME=" + home.path() + " LLMX_BASE_URL=" + mock.url() + " LLMX_API_KEY=test " +
                        LLMX_BIN + " exec --skip-git-repo-check -s danger-full-access -C " + work.path() +
                        " '@mock:shell cmd=echo on-a-terminal'; echo EXIT=$?; sleep 30";
  // One session per run on this test's own server (killing and restarting the server between
  // runs races with its shutdown).
  auto run_in_pane = [&](const std::string& name, const std::string& cmd) {
    tmux({"new-session", "-d", "-s", name, "-x", "160", "-y", "50", cmd});
    std::string pane;
    for (int i = 0; i < 200 && !contains(pane, "EXIT="); ++i) {
      std::this_thread::sleep_for(100ms);
      pane = tmux({"capture-pane", "-p", "-e", "-t", name});
    }
    return pane;
  };
  std::string pane = run_in_pane("colour", command);
  INFO(pane);
  // The exit status, the header, the command and its end, the answer, and colours.
  for (std::string_view seen : {"EXIT=0", "thread id", "echo on-a-terminal", "exited 0", "The command printed:", "\x1b[1m"})
    CHECK_MESSAGE(contains(pane, seen), seen);

  // NO_COLOR (no-color.org) turns colours off on a terminal too.
  pane = run_in_pane("nocolour", "env NO_COLOR=1 LLMX_HOME=" + home.path() + " LLMX_BASE_URL=" + mock.url() +
                                     " LLMX_API_KEY=test " + LLMX_BIN + " exec --skip-git-repo-check -C " + work.path() +
                                     " '@mock:text deltas=2'; echo EXIT=$?; sleep 30");
  INFO(pane);
  CHECK(contains(pane, "EXIT=0"));
  CHECK(contains(pane, "thread id"));
  CHECK_FALSE(contains(pane, "\x1b[1m"));  // no bold header (the coloured run has one)
  CHECK_FALSE(contains(pane, "\x1b[3"));   // no foreground colour

  // No prompt and stdin is the terminal: a clear usage error at once, not a silent wait for EOF.
  pane = run_in_pane("noprompt", "env LLMX_HOME=" + home.path() + " " + LLMX_BIN +
                                     " exec --skip-git-repo-check; echo EXIT=$?; sleep 30");
  INFO(pane);
  CHECK(contains(pane, "EXIT=2"));
  CHECK(contains(pane, "a prompt is required"));
}

TEST_CASE("exec: a turn that fails or is interrupted has no answer, --json completes its running command as failed") {
  TempDir home;
  TempDir work;
  auto last = work.write("last.txt", "previous answer");
  {
    // The model said "Running a command." and then went away mid-command: exit 1, nothing on
    // stdout, the --output-last-message file untouched.
    MockLlm mock;
    SpawnOptions o;
    o.argv = {LLMX_BIN, "exec", "--skip-git-repo-check", "-s", "danger-full-access", "-C", work.path(),
              "-c", "model_providers.litellm.request_max_retries=0", "-o", last, "@mock:shell cmd=sleep 2"};
    o.env = llmx_env(home.path(), mock.url());
    ChildProcess p(std::move(o));
    p.close_stdin();
    for (int i = 0; i < 100 && !contains(p.stderr_so_far(), "sleep 2"); ++i) std::this_thread::sleep_for(50ms);
    REQUIRE(contains(p.stderr_so_far(), "sleep 2"));
    mock.process().kill(SIGKILL);
    auto out = p.read_all_stdout();
    auto status = p.wait();
    INFO(p.stderr_so_far());
    CHECK(status.describe() == "exit code 1");
    CHECK(out.empty());
    CHECK(read_file(last) == "previous answer");
  }
  // Ctrl-C during a command with --json: the command's item ends (failed) before turn.failed.
  MockLlm mock;
  SpawnOptions o;
  o.argv = {LLMX_BIN, "exec", "--skip-git-repo-check", "--json", "-s", "danger-full-access", "-C", work.path(),
            "-o", last, "@mock:shell cmd=sleep 30"};
  o.env = llmx_env(home.path(), mock.url());
  ChildProcess p(std::move(o));
  p.close_stdin();
  std::vector<Message> events;
  while (auto line = p.read_line()) {
    events.emplace_back(*line);
    if (events.back().str_or("/type", "") == "item.started") break;
  }
  REQUIRE_FALSE(events.empty());
  REQUIRE(events.back().str("/item/type") == "command_execution");
  const auto id = events.back().str("/item/id");
  p.kill(SIGINT);
  for (auto& e : parse_json_lines(p.read_all_stdout())) events.push_back(e);
  CHECK(p.wait().describe() == "exit code 130");
  std::vector<std::string> tail;
  for (auto& e : events) tail.push_back(e.str("/type") + (e.has("/item/id") ? ":" + e.str("/item/id") + ":" + e.str_or("/item/status", "") : ""));
  std::string seen;
  for (auto& t : tail) seen += t + "\n";
  INFO(seen);
  REQUIRE(tail.size() >= 2);
  CHECK(tail[tail.size() - 2] == "item.completed:" + id + ":failed");
  CHECK(tail.back() == "turn.failed");
  CHECK(read_file(last) == "previous answer");
}
