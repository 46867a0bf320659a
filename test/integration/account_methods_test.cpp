// Account, auth and utility methods through the real `llmx mcp-server` (DECISIONS P1, P2):
// settings and identity, API-key login and logout with their notifications, ChatGPT login's
// clear refusal, account/*, feedback, gitDiffToRemote in a real repository, execOneOffCommand
// under the sandbox (without blocking other requests) and fuzzyFileSearch over a temp tree.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>

#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// The reply to one request (params JSON text, "" for none).
Message call(McpClient& mcp, std::string_view method, std::string_view params = {}) {
  return mcp.wait_for_response(mcp.request(method, params));
}

void check_error(const Message& r, int code, std::string_view needle) {
  INFO(r.line());
  REQUIRE(r.is_error());
  CHECK(r.integer("/error/code") == code);
  CHECK(contains(r.str("/error/message"), needle));
}

// Options for a server whose provider has no key in the environment (LLMX_API_KEY blank).
McpOptions without_env_key() {
  McpOptions o;
  o.env = {{"LLMX_API_KEY", ""}};
  return o;
}

// Runs `git args...` in `dir` with a fixed identity; true when it succeeded.
bool git(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-C", dir, "-c", "user.name=llmx", "-c", "user.email=llmx@example.com",
                                   "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"};
  argv.insert(argv.end(), args.begin(), args.end());
  SpawnOptions o;
  o.argv = {"/usr/bin/env"};
  o.argv.insert(o.argv.end(), argv.begin(), argv.end());
  ChildProcess p(std::move(o));
  p.close_stdin();
  return p.wait().ok();
}

bool have_git() {
  TempDir d("llmx-git-probe");
  return git(d.path(), {"--version"});
}

}  // namespace

TEST_CASE("account: getUserAgent, userInfo and no-params methods reject params") {
  InitializedMcp f;
  auto ua = call(f.mcp, "getUserAgent");
  INFO(ua.line());
  CHECK(ua.str("/result/userAgent").starts_with("llmx/"));
  CHECK(contains(ua.str("/result/userAgent"), "("));  // the client's name and version as the suffix
  CHECK(call(f.mcp, "userInfo", "{}").text("/result") == R"({"allegedUserEmail":null})");
  CHECK(call(f.mcp, "userInfo", "null").text("/result") == R"({"allegedUserEmail":null})");
  check_error(call(f.mcp, "getUserAgent", R"({"x":1})"), -32602, "takes no params");
  check_error(call(f.mcp, "account/logout", "[]"), -32602, "takes no params");
}

TEST_CASE("account: getUserSavedConfig reports what config.toml says, null where unset") {
  McpServerFixture f;
  f.home.write("config.toml",
               "model = \"gpt-4o\"\napproval_policy = \"never\"\n[tools]\nview_image = false\n"
               "[profiles.fast]\nmodel = \"gpt-4o-mini\"\n");
  f.mcp.initialize();
  auto r = call(f.mcp, "getUserSavedConfig");
  INFO(r.line());
  CHECK(r.str("/result/config/model") == "gpt-4o");
  CHECK(r.str("/result/config/approvalPolicy") == "never");
  CHECK(r.text("/result/config/sandboxMode") == "null");
  CHECK(r.text("/result/config/sandboxSettings") == "null");
  CHECK(r.text("/result/config/tools") == R"({"webSearch":null,"viewImage":false})");
  CHECK(r.str("/result/config/profiles/fast/model") == "gpt-4o-mini");
  CHECK(r.text("/result/config/profiles/fast/modelProvider") == "null");
  // Edited after start into something unreadable: an internal error naming the file.
  f.home.write("config.toml", "model = [\n");
  check_error(call(f.mcp, "getUserSavedConfig"), -32603, "failed to parse config.toml: " + f.home.file("config.toml"));
}

TEST_CASE("account: loginApiKey stores the key 0600, notifies authStatusChange, logout clears it") {
  InitializedMcp f(without_env_key());
  auto before = call(f.mcp, "getAuthStatus", R"({"includeToken":true})");
  CHECK(before.text("/result") == R"({"authMethod":null,"authToken":null,"requiresOpenaiAuth":true})");

  const std::string key = "sk-test-acct-0123456789";
  auto id = f.mcp.request("loginApiKey", R"({"apiKey":")" + key + R"("})");
  auto r = f.mcp.wait_for_response(id);
  CHECK(r.text("/result") == "{}");
  auto n = f.mcp.wait_for([](const Message& m) { return m.method() == "authStatusChange"; }, "authStatusChange");
  CHECK(n.text("/params") == R"({"authMethod":"apikey"})");
  CHECK(n.index() > r.index());  // the reply first
  struct stat st {};
  REQUIRE(::stat(f.home.file("auth.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(contains(read_file(f.home.file("auth.json")), key));

  auto with_token = call(f.mcp, "getAuthStatus", R"({"includeToken":true,"refreshToken":false})");
  CHECK(with_token.text("/result") ==
        R"({"authMethod":"apikey","authToken":")" + key + R"(","requiresOpenaiAuth":true})");
  auto without_token = call(f.mcp, "getAuthStatus", "{}");
  CHECK(without_token.text("/result/authToken") == "null");

  auto out_id = f.mcp.request("logoutChatGpt");
  CHECK(f.mcp.wait_for_response(out_id).text("/result") == "{}");
  auto out = f.mcp.wait_for(
      [](const Message& m) { return m.method() == "authStatusChange" && m.text("/params/authMethod") == "null"; },
      "authStatusChange after logout");
  CHECK(out.text("/params") == R"({"authMethod":null})");
  CHECK_FALSE(fs::exists(f.home.file("auth.json")));
  CHECK(call(f.mcp, "getAuthStatus", "{}").text("/result/authMethod") == "null");
}

TEST_CASE("account: loginApiKey params errors and forced ChatGPT login") {
  InitializedMcp f;
  check_error(call(f.mcp, "loginApiKey", "{}"), -32602, "apiKey");
  check_error(call(f.mcp, "loginApiKey"), -32602, "apiKey");
  check_error(call(f.mcp, "loginApiKey", R"({"apiKey":5})"), -32602, "apiKey");
  check_error(call(f.mcp, "loginApiKey", R"({"apiKey":"  "})"), -32602, "apiKey");
  check_error(call(f.mcp, "getAuthStatus", R"({"includeToken":"yes"})"), -32602, "includeToken");
  f.home.write("config.toml", "forced_login_method = \"chatgpt\"\n");
  check_error(call(f.mcp, "loginApiKey", R"({"apiKey":"sk-x"})"), -32600, "forced_login_method");
  CHECK_FALSE(fs::exists(f.home.file("auth.json")));
}

TEST_CASE("account: ChatGPT login is refused naming the provider's API key, cancel finds no login") {
  InitializedMcp f;
  auto v1 = call(f.mcp, "loginChatGpt");
  check_error(v1, -32600, "ChatGPT login is not supported by llmx");
  CHECK(contains(v1.str("/error/message"), "`litellm`"));
  CHECK(contains(v1.str("/error/message"), "LLMX_API_KEY"));
  auto v2 = call(f.mcp, "account/login/start", R"({"type":"chatgpt"})");
  check_error(v2, -32600, "ChatGPT login is not supported by llmx");
  CHECK(contains(v2.str("/error/message"), "LLMX_API_KEY"));

  const std::string uuid = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
  check_error(call(f.mcp, "cancelLoginChatGpt", R"({"loginId":")" + uuid + R"("})"), -32600,
              "login id not found: " + uuid);
  check_error(call(f.mcp, "cancelLoginChatGpt", R"({"loginId":"nope"})"), -32602, "loginId");
  check_error(call(f.mcp, "cancelLoginChatGpt", "{}"), -32602, "loginId");
  check_error(call(f.mcp, "account/login/cancel", R"({"loginId":")" + uuid + R"("})"), -32600,
              "login id not found: " + uuid);
  check_error(call(f.mcp, "account/login/cancel", R"({"loginId":"nope"})"), -32600, "invalid login id: nope");
  check_error(call(f.mcp, "account/login/cancel", R"({"loginId":1})"), -32602, "loginId");
  // No login ever started, so nothing completes: no loginChatGptComplete, no account/login/completed.
  f.mcp.drain(std::chrono::milliseconds(100));
  for (const auto& m : f.mcp.log()) {
    CHECK(m.method() != "loginChatGptComplete");
    CHECK(m.method() != "account/login/completed");
  }
}

TEST_CASE("account: account/read, account/login/start with an API key, account/logout") {
  InitializedMcp f(without_env_key());
  CHECK(call(f.mcp, "account/read", "{}").text("/result") == R"({"account":null,"requiresOpenaiAuth":true})");

  auto id = f.mcp.request("account/login/start", R"({"type":"apiKey","apiKey":"sk-v2-key"})");
  auto r = f.mcp.wait_for_response(id);
  CHECK(r.text("/result") == R"({"type":"apiKey"})");
  auto done = f.mcp.wait_for([](const Message& m) { return m.method() == "account/login/completed"; }, "completed");
  CHECK(done.text("/params") == R"({"loginId":null,"success":true,"error":null})");
  auto upd = f.mcp.wait_for([](const Message& m) { return m.method() == "account/updated"; }, "account/updated");
  CHECK(upd.text("/params") == R"({"authMode":"apikey"})");
  CHECK(r.index() < done.index());
  CHECK(done.index() < upd.index());
  CHECK(call(f.mcp, "account/read", R"({"refreshToken":true})").text("/result") ==
        R"({"account":{"type":"apiKey"},"requiresOpenaiAuth":true})");

  check_error(call(f.mcp, "account/login/start", R"({"type":"apiKey"})"), -32602, "apiKey");
  check_error(call(f.mcp, "account/login/start", R"({"type":"oauth"})"), -32602, "oauth");
  check_error(call(f.mcp, "account/login/start", "{}"), -32602, "type");

  auto out_id = f.mcp.request("account/logout");
  CHECK(f.mcp.wait_for_response(out_id).text("/result") == "{}");
  auto cleared = f.mcp.wait_for(
      [](const Message& m) { return m.method() == "account/updated" && m.text("/params/authMode") == "null"; },
      "account/updated after logout");
  CHECK(cleared.text("/params") == R"({"authMode":null})");
  CHECK(call(f.mcp, "account/read", "{}").text("/result/account") == "null");
}

TEST_CASE("account: the environment's key counts as an account") {
  McpServerFixture f;  // LLMX_API_KEY=test
  f.mcp.initialize();
  CHECK(call(f.mcp, "account/read", "{}").text("/result") ==
        R"({"account":{"type":"apiKey"},"requiresOpenaiAuth":true})");
  CHECK(call(f.mcp, "getAuthStatus", R"({"includeToken":true})").text("/result") ==
        R"({"authMethod":"apikey","authToken":"test","requiresOpenaiAuth":true})");
}

TEST_CASE("account: account/rateLimits/read before any rate-limit headers") {
  InitializedMcp f;
  check_error(call(f.mcp, "account/rateLimits/read"), -32600,
              "no rate-limit information yet: the provider has not sent rate-limit headers");
}

TEST_CASE("account: feedback/upload appends a line to feedback.jsonl") {
  InitializedMcp f;
  const std::string conv = "0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c";
  auto r = call(f.mcp, "feedback/upload",
                R"({"classification":"bug","reason":"agent looped","conversationId":")" + conv +
                    R"(","includeLogs":true})");
  CHECK(r.text("/result") == R"({"threadId":")" + conv + R"("})");
  CHECK(call(f.mcp, "feedback/upload", R"({"classification":"good","includeLogs":false})").text("/result") ==
        R"({"threadId":""})");
  auto lines = split_lines(read_file(f.home.file("feedback.jsonl")));
  REQUIRE(lines.size() == 2);
  Message first(lines[0]);
  CHECK(first.str("/classification") == "bug");
  CHECK(first.str("/reason") == "agent looped");
  CHECK(first.str("/conversationId") == conv);
  CHECK(first.boolean("/includeLogs"));
  CHECK(first.str("/timestamp").ends_with("Z"));
  CHECK(Message(lines[1]).text("/reason") == "null");
  check_error(call(f.mcp, "feedback/upload", R"({"classification":"bug"})"), -32602, "includeLogs");
  check_error(call(f.mcp, "feedback/upload", R"({"classification":"bug","includeLogs":true,"conversationId":"x"})"),
              -32602, "conversationId");
}

TEST_CASE("account: gitDiffToRemote diffs a repository against its upstream") {
  if (!have_git()) {
    MESSAGE("git is not installed: skipped");
    return;
  }
  InitializedMcp f;
  TempDir dir("llmx-acct-git");
  std::string origin = dir.file("origin"), work = dir.file("work");
  fs::create_directories(origin);
  REQUIRE(git(origin, {"init", "-q"}));
  dir.write("origin/a.txt", "one\n");
  REQUIRE(git(origin, {"add", "a.txt"}));
  REQUIRE(git(origin, {"commit", "-q", "-m", "first"}));
  REQUIRE(git(dir.path(), {"clone", "-q", origin, work}));
  dir.write("work/a.txt", "one\ntwo\n");
  dir.write("work/untracked.txt", "fresh\n");

  auto r = call(f.mcp, "gitDiffToRemote", R"({"cwd":)" + json_quote(work) + "}");
  INFO(r.line());
  REQUIRE_FALSE(r.is_error());
  CHECK(r.str("/result/sha").size() == 40);
  auto diff = r.str("/result/diff");
  CHECK(contains(diff, "diff --git a/a.txt b/a.txt"));
  CHECK(contains(diff, "+two"));
  CHECK(contains(diff, "diff --git a/untracked.txt b/untracked.txt"));
  CHECK(contains(diff, "+fresh"));

  TempDir plain("llmx-acct-nogit");
  check_error(call(f.mcp, "gitDiffToRemote", R"({"cwd":)" + json_quote(plain.path()) + "}"), -32600,
              "failed to compute git diff to remote for cwd: \"" + plain.path() + "\"");
  check_error(call(f.mcp, "gitDiffToRemote", "{}"), -32602, "cwd");
}

TEST_CASE("account: execOneOffCommand runs argv under the sandbox without blocking the session") {
  InitializedMcp f;
  TempDir dir("llmx-acct-exec");
  auto hi = call(f.mcp, "execOneOffCommand", R"({"command":["echo","hi"],"cwd":)" + json_quote(dir.path()) + "}");
  INFO(hi.line());
  CHECK(hi.text("/result") == R"({"exitCode":0,"stdout":"hi\n","stderr":""})");

  // Read-only: the write fails inside the sandbox; the command itself ran.
  auto ro = call(f.mcp, "execOneOffCommand",
                 R"({"command":["sh","-c","echo x > made.txt; echo done"],"timeoutMs":10000,"cwd":)" +
                     json_quote(dir.path()) + R"(,"sandboxPolicy":{"mode":"read-only"}})");
  INFO(ro.line());
  REQUIRE_FALSE(ro.is_error());
  CHECK(ro.str("/result/stdout") == "done\n");
  CHECK(ro.str("/result/stderr") != "");
  CHECK_FALSE(fs::exists(dir.file("made.txt")));
  // workspace-write lets it write in cwd.
  auto ww = call(f.mcp, "execOneOffCommand",
                 R"({"command":["sh","-c","echo x > made.txt"],"cwd":)" + json_quote(dir.path()) +
                     R"(,"sandboxPolicy":{"mode":"workspace-write"}})");
  CHECK(ww.integer("/result/exitCode") == 0);
  CHECK(fs::exists(dir.file("made.txt")));

  auto code = call(f.mcp, "execOneOffCommand", R"({"command":["sh","-c","exit 7"]})");
  CHECK(code.integer("/result/exitCode") == 7);

  // A slow command does not hold up the next request.
  auto slow = f.mcp.request("execOneOffCommand", R"({"command":["sleep","2"]})");
  auto quick = f.mcp.wait_for_response(f.mcp.request("getUserAgent"));
  auto slow_r = f.mcp.wait_for_response(slow);
  CHECK(quick.index() < slow_r.index());
  CHECK(slow_r.integer("/result/exitCode") == 0);

  check_error(call(f.mcp, "execOneOffCommand", R"({"command":[]})"), -32600, "command must not be empty");
  check_error(call(f.mcp, "execOneOffCommand", "{}"), -32602, "command");
  check_error(call(f.mcp, "execOneOffCommand", R"({"command":"ls"})"), -32602, "command");
  check_error(call(f.mcp, "execOneOffCommand", R"({"command":["ls"],"sandboxPolicy":{"mode":"nope"}})"), -32602,
              "sandboxPolicy");
  check_error(call(f.mcp, "execOneOffCommand", R"({"command":["llmx-no-such-program-xyz"]})"), -32603,
              "exec failed: ");
  check_error(call(f.mcp, "execOneOffCommand", R"({"command":["sleep","5"],"timeoutMs":200})"), -32603,
              "timed out");
}

TEST_CASE("account: fuzzyFileSearch ranks files under the roots") {
  InitializedMcp f;
  TempDir dir("llmx-acct-fuzzy");
  dir.write("abexy", "x");
  dir.write("sub/abce", "x");
  dir.write("other.txt", "x");
  dir.write(".git/abe", "x");
  dir.write(".gitignore", "ignored/\n");
  dir.write("ignored/abe", "x");
  auto r = call(f.mcp, "fuzzyFileSearch",
                R"({"query":"abe","roots":[)" + json_quote(dir.path()) + R"(],"cancellationToken":"s1"})");
  INFO(r.line());
  auto files = r.at("/result/files");
  REQUIRE(files.is_array());
  REQUIRE(r.has("/result/files/1"));
  CHECK_FALSE(r.has("/result/files/2"));
  CHECK(r.str("/result/files/0/path") == "abexy");
  CHECK(r.str("/result/files/0/root") == dir.path());
  CHECK(r.str("/result/files/0/file_name") == "abexy");
  CHECK(r.text("/result/files/0/indices") == "[0,1,2]");
  CHECK(r.str("/result/files/1/path") == "sub/abce");
  CHECK(r.str("/result/files/1/file_name") == "abce");
  CHECK(r.text("/result/files/1/indices") == "[4,5,7]");
  CHECK(r.integer("/result/files/0/score") > r.integer("/result/files/1/score"));

  CHECK(call(f.mcp, "fuzzyFileSearch", R"({"query":"","roots":[)" + json_quote(dir.path()) + "]}").text("/result") ==
        R"({"files":[]})");
  check_error(call(f.mcp, "fuzzyFileSearch", R"({"query":"abe"})"), -32602, "roots");
}
