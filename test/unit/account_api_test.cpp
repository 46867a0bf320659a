// Unit tests of the plain code behind the account and utility methods (protocol/rpc/account_api.hpp, protocol/workspace/):
// fuzzy scoring and ordering, the file walk (.git and .gitignore), UserSavedConfig from
// config.toml, the v2 rate-limit shape, params decoding (strict where the reference is strict,
// tolerant of unknown keys), feedback lines, summaries, child processes and the git diff.
#include "protocol/rpc/account_api.hpp"
#include "protocol/rpc/workspace_api.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "protocol/base/json_codec.hpp"
#include "protocol/base/text.hpp"
#include "sandbox/run_command.hpp"
#include "test/support/unit_temp_dir.hpp"

using namespace llmx;
using namespace llmx::api;
using namespace llmx::workspace;
using llmx::sandbox::run_command;
using llmx::test::ScratchDir;
namespace fs = std::filesystem;

namespace {

template <class P>
P decode_params(std::string_view text) {
  return json::parse_as<P>(text);
}

template <class P>
std::string decode_error(std::string_view text) {
  try {
    json::parse_as<P>(text);
  } catch (const json::DecodeError& err) {
    return err.what();
  }
  return "";
}

std::vector<std::string> paths_of(const std::vector<FuzzyFileMatch>& m) {
  std::vector<std::string> out;
  for (const auto& x : m) out.push_back(x.path);
  return out;
}

// The runner the server passes: the shared process loop.
CommandOutput run_command_fn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                             std::chrono::milliseconds timeout) {
  return run_command(argv, env, timeout);
}

bool have_git() { return run_command({"git", "--version"}, {}, std::chrono::seconds(10)).exit_code == 0; }

// Runs git in `dir` with a fixed identity; fails the test when git fails.
std::string git_in(const std::string& dir, std::vector<std::string> args) {
  std::vector<std::string> argv = {"git", "-C", dir, "-c", "user.name=llmx", "-c", "user.email=llmx@example.com",
                                   "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_command(argv, {}, std::chrono::seconds(30));
  INFO("git " << args.front() << ": " << r.err << r.failure);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

}  // namespace

// --- fuzzy matching ------------------------------------------------------------------------------------

TEST_CASE("account fuzzy: subsequence matches with indices, the reference example orders as documented") {
  auto a = fuzzy_score("abe", "abexy");
  auto b = fuzzy_score("abe", "sub/abce");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->indices == std::vector<uint32_t>{0, 1, 2});
  CHECK(b->indices == std::vector<uint32_t>{4, 5, 7});
  CHECK(a->score > b->score);
  CHECK_FALSE(fuzzy_score("abz", "abexy"));
  CHECK_FALSE(fuzzy_score("", "abexy"));
  CHECK_FALSE(fuzzy_score("   ", "abexy"));
  CHECK_FALSE(fuzzy_score("abcdef", "abc"));
}

TEST_CASE("account fuzzy: case-insensitive, boundaries and runs beat scattered letters") {
  auto upper = fuzzy_score("README", "docs/readme.md");
  REQUIRE(upper);
  CHECK(upper->indices == std::vector<uint32_t>{5, 6, 7, 8, 9, 10});
  // The best alignment is chosen, not the leftmost one: "main" in src/main.rs rather than the
  // scattered m-a-i-n of "my_app/index/n".
  auto best = fuzzy_score("main", "mxaxixn/main.rs");
  REQUIRE(best);
  CHECK(best->indices == std::vector<uint32_t>{8, 9, 10, 11});
  auto word_start = fuzzy_score("fb", "foo_bar");
  auto mid_word = fuzzy_score("fb", "xfoobar");
  REQUIRE(word_start);
  REQUIRE(mid_word);
  CHECK(word_start->score > mid_word->score);
  auto camel = fuzzy_score("fb", "fooBar");
  auto flat = fuzzy_score("fb", "foobar");
  REQUIRE(camel);
  REQUIRE(flat);
  CHECK(camel->score > flat->score);
  auto run = fuzzy_score("abc", "xabcx");
  auto spread = fuzzy_score("abc", "xaxbxcx");
  CHECK(run->score > spread->score);
}

TEST_CASE("account fuzzy: every whitespace-separated term must match, indices are code points") {
  auto both = fuzzy_score("src main", "src/app/main.cpp");
  REQUIRE(both);
  CHECK(both->indices == std::vector<uint32_t>{0, 1, 2, 8, 9, 10, 11});
  CHECK_FALSE(fuzzy_score("src zzz", "src/app/main.cpp"));
  auto utf8 = fuzzy_score("ab", "\xc3\xa9t\xc3\xa9/ab");  // "été/ab"
  REQUIRE(utf8);
  CHECK(utf8->indices == std::vector<uint32_t>{4, 5});
}

TEST_CASE("account fuzzy: sort_matches orders by score descending, then path ascending") {
  std::vector<FuzzyFileMatch> m = {{"/r", "b", "b", 10, {}}, {"/r", "a", "a", 10, {}}, {"/r", "c", "c", 30, {}},
                                   {"/r", "d", "d", 5, {}}};
  sort_matches(m);
  CHECK(paths_of(m) == std::vector<std::string>{"c", "a", "b", "d"});
}

// --- .gitignore and the walk ------------------------------------------------------------------------

TEST_CASE("account fuzzy: gitignore patterns") {
  CHECK(gitignore_match("*.log", "a/b/debug.log", false));
  CHECK_FALSE(gitignore_match("*.log", "a/b/debug.txt", false));
  CHECK(gitignore_match("build/", "sub/build", true));
  CHECK_FALSE(gitignore_match("build/", "sub/build", false));  // dir-only
  CHECK(gitignore_match("/out", "out", true));
  CHECK_FALSE(gitignore_match("/out", "sub/out", true));  // anchored
  CHECK(gitignore_match("docs/*.md", "docs/a.md", false));
  CHECK_FALSE(gitignore_match("docs/*.md", "docs/x/a.md", false));
  CHECK(gitignore_match("**/gen", "a/b/gen", true));
  CHECK(gitignore_match("a/**/z", "a/z", false));
  CHECK(gitignore_match("a/**/z", "a/b/c/z", false));
  CHECK(gitignore_match("file[0-9].txt", "file7.txt", false));
  CHECK_FALSE(gitignore_match("file[!0-9].txt", "file7.txt", false));
  CHECK(gitignore_match("?.c", "x.c", false));
  CHECK_FALSE(gitignore_match("# comment", "# comment", false));
}

TEST_CASE("account fuzzy: the walk skips .git and ignored entries, honours negation, limits per root") {
  ScratchDir dir("llmx_fuzzy");
  dir.write("src/abexy.txt", "x");
  dir.write("src/sub/abce.txt", "x");
  dir.write(".git/abe_in_git", "x");
  dir.write(".gitignore", "build/\n*.tmp\n!keep_abe.tmp\n");
  dir.write("build/abe_built.txt", "x");
  dir.write("x/abe_scratch.tmp", "x");
  dir.write("x/keep_abe.tmp", "x");
  dir.write("nested/.gitignore", "local_abe\n");
  dir.write("nested/local_abe", "x");
  dir.write("nested/other_abe", "x");
  dir.write(".hidden_abe", "x");

  auto found = fuzzy_file_search("abe", {dir.path()});
  auto paths = paths_of(found);
  CAPTURE(paths.size());
  auto has = [&](const std::string& p) { return std::find(paths.begin(), paths.end(), p) != paths.end(); };
  CHECK(has("src/abexy.txt"));
  CHECK(has("src/sub/abce.txt"));
  CHECK(has("x/keep_abe.tmp"));
  CHECK(has("nested/other_abe"));
  CHECK(has(".hidden_abe"));
  CHECK_FALSE(has(".git/abe_in_git"));
  CHECK_FALSE(has("build/abe_built.txt"));
  CHECK_FALSE(has("x/abe_scratch.tmp"));
  CHECK_FALSE(has("nested/local_abe"));
  for (size_t i = 1; i < found.size(); ++i) {
    bool ordered = found[i - 1].score > found[i].score ||
                   (found[i - 1].score == found[i].score && found[i - 1].path < found[i].path);
    CHECK(ordered);
  }
  for (const auto& m : found) {
    CHECK(m.root == dir.path());
    CHECK(m.file_name == fs::path(m.path).filename().string());
    REQUIRE(m.indices);
    CHECK(m.indices->size() == 3);
  }

  // Limits apply per root; each root's best survive.
  ScratchDir many("llmx_fuzzy_many");
  for (int i = 0; i < 80; ++i) many.write("f" + std::to_string(i) + "_abe", "x");
  many.write("abe", "x");
  auto limited = fuzzy_file_search("abe", {many.path(), dir.path()}, nullptr, 10);
  size_t from_many = 0;
  for (const auto& m : limited) from_many += m.root == many.path();
  CHECK(from_many == 10);
  CHECK(limited.size() > 10);
  CHECK(limited.front().path == "abe");

  CHECK(fuzzy_file_search("", {dir.path()}).empty());
  CHECK(fuzzy_file_search("abe", {dir.path() + "/does-not-exist"}).empty());
  std::atomic<bool> cancelled{true};
  CHECK(fuzzy_file_search("abe", {dir.path()}, &cancelled).empty());
}

// --- UserSavedConfig --------------------------------------------------------------------------------

TEST_CASE("account saved config: every key present, null when unset") {
  auto empty = json::to_json(user_saved_config_from_toml("", "config.toml"));
  CHECK(empty ==
        R"({"approvalPolicy":null,"sandboxMode":null,"sandboxSettings":null,"forcedChatgptWorkspaceId":null,)"
        R"("forcedLoginMethod":null,"model":null,"modelReasoningEffort":null,"modelReasoningSummary":null,)"
        R"("modelVerbosity":null,"tools":null,"profile":null,"profiles":{}})");
  ScratchDir home("llmx_saved");
  CHECK(json::to_json(load_user_saved_config(home.path())) == empty);  // no config.toml at all
}

TEST_CASE("account saved config: the reference example round-trips") {
  const char* toml = R"(
model = "gpt-5-llmx"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
model_reasoning_summary = "detailed"
model_reasoning_effort = "high"
model_verbosity = "medium"
profile = "test"
forced_login_method = "chatgpt"

[sandbox_workspace_write]
writable_roots = ["/tmp"]
network_access = true
exclude_tmpdir_env_var = true
exclude_slash_tmp = true

[tools]
web_search = false
view_image = true

[profiles.test]
model = "gpt-4o"
approval_policy = "on-request"
model_reasoning_effort = "high"
model_reasoning_summary = "detailed"
model_verbosity = "medium"
model_provider = "openai"
chatgpt_base_url = "https://api.chatgpt.com"
)";
  auto cfg = user_saved_config_from_toml(toml, "config.toml");
  CHECK(json::to_json(cfg) ==
        R"({"approvalPolicy":"on-request","sandboxMode":"workspace-write","sandboxSettings":{"writableRoots":["/tmp"],)"
        R"("networkAccess":true,"excludeTmpdirEnvVar":true,"excludeSlashTmp":true},"forcedChatgptWorkspaceId":null,)"
        R"("forcedLoginMethod":"chatgpt","model":"gpt-5-llmx","modelReasoningEffort":"high",)"
        R"("modelReasoningSummary":"detailed","modelVerbosity":"medium","tools":{"webSearch":false,"viewImage":true},)"
        R"("profile":"test","profiles":{"test":{"model":"gpt-4o","modelProvider":"openai",)"
        R"("approvalPolicy":"on-request","modelReasoningEffort":"high","modelReasoningSummary":"detailed",)"
        R"("modelVerbosity":"medium","chatgptBaseUrl":"https://api.chatgpt.com"}}})");
  // Partial tables keep null members; the legacy web_search_request spelling counts.
  auto partial = user_saved_config_from_toml("[sandbox_workspace_write]\nnetwork_access = false\n[tools]\n"
                                             "web_search_request = true\n",
                                             "config.toml");
  CHECK(json::to_json(partial.sandboxSettings) ==
        R"({"writableRoots":[],"networkAccess":false,"excludeTmpdirEnvVar":null,"excludeSlashTmp":null})");
  CHECK(json::to_json(partial.tools) == R"({"webSearch":true,"viewImage":null})");
}

TEST_CASE("account saved config: bad TOML, wrong types and unknown spellings name the file, line and key") {
  auto error_of = [](std::string_view text) -> std::string {
    try {
      user_saved_config_from_toml(text, "/h/config.toml");
    } catch (const SavedConfigError& err) {
      CHECK_FALSE(err.unreadable);
      return err.what();
    }
    return "";
  };
  CHECK(error_of("model = [\n").starts_with("/h/config.toml:"));
  auto wrong_type = error_of("\nmodel = 5\n");
  CHECK(wrong_type.starts_with("/h/config.toml:2:"));
  CHECK(wrong_type.find("`model`") != std::string::npos);
  auto spelling = error_of("approval_policy = \"sometimes\"\n");
  CHECK(spelling.find("approval_policy") != std::string::npos);
  CHECK(spelling.find("sometimes") != std::string::npos);
  CHECK(error_of("[profiles.p]\nmodel_verbosity = \"loud\"\n").find("profiles.p.model_verbosity") != std::string::npos);
}

// --- rate limits ------------------------------------------------------------------------------------

TEST_CASE("account rate limits: the v2 shape rounds the percentage and keeps windows and resets") {
  RateLimitSnapshot s{RateLimitWindow{42.5, 60, 1735689720}, RateLimitWindow{4.4, std::nullopt, std::nullopt}};
  CHECK(json::to_json(RateLimitsResult{to_v2(s)}) ==
        R"({"rateLimits":{"primary":{"usedPercent":43,"windowDurationMins":60,"resetsAt":1735689720},)"
        R"("secondary":{"usedPercent":4,"windowDurationMins":null,"resetsAt":null}}})");
  CHECK(json::to_json(to_v2(RateLimitSnapshot{})) == R"({"primary":null,"secondary":null})");
  CHECK(to_v2(RateLimitWindow{99.5, 1, 2}).usedPercent == 100);
}

// --- params -------------------------------------------------------------------------------------------

TEST_CASE("account params: login/start is tagged by type, required fields are named, unknown keys ignored") {
  auto api_key = decode_params<LoginStartParams>(R"({"type":"apiKey","apiKey":"sk-1","extra":1})");
  REQUIRE(api_key.is<LoginStartApiKey>());
  CHECK(api_key.get_if<LoginStartApiKey>()->apiKey == "sk-1");
  CHECK(decode_params<LoginStartParams>(R"({"type":"chatgpt"})").is<LoginStartChatGpt>());
  CHECK(decode_error<LoginStartParams>(R"({"type":"apiKey"})").find("apiKey") != std::string::npos);
  CHECK(decode_error<LoginStartParams>(R"({"type":"oauth"})").find("oauth") != std::string::npos);
  CHECK(decode_error<LoginStartParams>(R"({})").find("type") != std::string::npos);
  CHECK(decode_error<LoginApiKeyParams>(R"({"apiKey":5})").find("apiKey") != std::string::npos);
  CHECK(decode_error<LoginApiKeyParams>(R"({})").find("apiKey") != std::string::npos);
  // Everything optional: {} and unknown keys are fine.
  auto status = decode_params<GetAuthStatusParams>(R"({"whatever":true})");
  CHECK_FALSE(status.includeToken);
  CHECK(decode_params<AccountReadParams>("{}").refreshToken == std::nullopt);
}

TEST_CASE("account params: execOneOffCommand, fuzzyFileSearch, feedback/upload and gitDiffToRemote") {
  auto exec = decode_params<ExecOneOffCommandParams>(
      R"({"command":["ls","-la"],"timeoutMs":10000,"cwd":"/tmp","sandboxPolicy":{"mode":"read-only"}})");
  CHECK(exec.command == std::vector<std::string>{"ls", "-la"});
  CHECK(exec.timeoutMs == 10000);
  REQUIRE(exec.sandboxPolicy);
  CHECK(exec.sandboxPolicy->mode == SandboxMode::read_only);
  auto ww = decode_params<ExecOneOffCommandParams>(
      R"({"command":["true"],"sandboxPolicy":{"mode":"workspace-write","writable_roots":["/x"],"network_access":true}})");
  CHECK(ww.sandboxPolicy->writable_roots == std::vector<std::string>{"/x"});
  CHECK(ww.sandboxPolicy->network_access);
  CHECK(decode_error<ExecOneOffCommandParams>(R"({})").find("command") != std::string::npos);
  CHECK(decode_error<ExecOneOffCommandParams>(R"({"command":"ls"})").find("command") != std::string::npos);
  CHECK(decode_error<ExecOneOffCommandParams>(R"({"command":["ls"],"sandboxPolicy":{"mode":"open"}})")
            .find("sandboxPolicy") != std::string::npos);
  CHECK(decode_error<ExecOneOffCommandParams>(R"({"command":["ls"],"timeoutMs":"soon"})").find("timeoutMs") !=
        std::string::npos);

  auto fz = decode_params<FuzzyFileSearchParams>(R"({"query":"abe","roots":["/a"],"cancellationToken":"t"})");
  CHECK(fz.cancellationToken == "t");
  CHECK(decode_error<FuzzyFileSearchParams>(R"({"query":"abe"})").find("roots") != std::string::npos);

  CHECK(decode_error<FeedbackUploadParams>(R"({"classification":"bug"})").find("includeLogs") != std::string::npos);
  auto fb = decode_params<FeedbackUploadParams>(R"({"classification":"bug","includeLogs":false})");
  CHECK_FALSE(fb.reason);
  CHECK(decode_error<GitDiffToRemoteParams>(R"({})").find("cwd") != std::string::npos);
}

// --- feedback, summaries ------------------------------------------------------------------------------

TEST_CASE("account feedback: one JSON line per upload, appended to a 0600 feedback.jsonl") {
  FeedbackUploadParams p;
  p.classification = "bug";
  p.reason = "agent looped";
  p.conversationId = "0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c";
  p.includeLogs = true;
  auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1735689600));
  auto line = feedback_line(p, t);
  CHECK(line ==
        R"({"timestamp":"2025-01-01T00:00:00.000Z","classification":"bug","reason":"agent looped",)"
        R"("conversationId":"0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c","includeLogs":true})");
  ScratchDir home("llmx_feedback");
  append_feedback(home.path(), line);
  append_feedback(home.path(), "{}");
  CHECK(home.read("feedback.jsonl") == line + "\n{}\n");
  struct stat st {};
  REQUIRE(::stat(home.at("feedback.jsonl").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK_THROWS(append_feedback(home.path() + "/missing-dir", "{}"));
}

TEST_CASE("account summary: target from params, and the wire summary of a stored thread") {
  GetConversationSummaryParams both;
  both.rolloutPath = "sessions/x.jsonl";
  both.conversationId = "0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c";
  auto t = summary_target(both, "/home/me/.llmx");
  CHECK(t.path == "/home/me/.llmx/sessions/x.jsonl");  // rolloutPath wins, relative to home
  CHECK_FALSE(t.id);
  GetConversationSummaryParams by_id;
  by_id.conversationId = "0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c";
  CHECK(summary_target(by_id, "/h").id == by_id.conversationId);
  CHECK_FALSE(summary_target(by_id, "/h").bad_id);
  by_id.conversationId = "nope";
  CHECK(summary_target(by_id, "/h").bad_id);
  CHECK_THROWS_AS(summary_target(GetConversationSummaryParams{}, "/h"), std::invalid_argument);

  threads::ThreadSummary ts;
  ts.id = "0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c";
  ts.path = "/h/sessions/r.jsonl";
  ts.preview = "Fix the tests";
  ts.created_at = "2025-11-20T10:00:00.123Z";
  ts.cwd = "/p";
  ts.cli_version = "0.1.0";
  ts.source = "vscode";
  rollout::GitInfo g;
  g.commit_hash = "a1b2c3";
  g.branch = "main";
  ts.git = g;
  CHECK(json::to_json(summary_from(ts, "litellm")) ==
        R"({"conversationId":"0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c","path":"/h/sessions/r.jsonl",)"
        R"("preview":"Fix the tests","timestamp":"2025-11-20T10:00:00.123Z","modelProvider":"litellm","cwd":"/p",)"
        R"("cliVersion":"0.1.0","source":"vscode","gitInfo":{"sha":"a1b2c3","branch":"main","origin_url":null}})");
  ts.source = R"({"subagent":"review"})";
  ts.model_provider = "openai";
  ts.git.reset();
  ts.created_at.clear();
  auto s = summary_from(ts, "litellm");
  CHECK(s.source.text == R"({"subagent":"review"})");
  CHECK(s.modelProvider == "openai");
  CHECK_FALSE(s.timestamp);
  CHECK_FALSE(s.gitInfo);
}

// --- processes and git ---------------------------------------------------------------------------------

TEST_CASE("account run_command: output, exit codes, missing programs, timeouts") {
  auto ok = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"}, {{"LLMX_T", "v"}}, std::chrono::seconds(10));
  CHECK(ok.failure.empty());
  CHECK(ok.exit_code == 3);
  CHECK(ok.out == "out\n");
  CHECK(ok.err == "err\n");
  auto env = run_command({"sh", "-c", "printf %s \"$LLMX_T\""}, {{"LLMX_T", "v"}}, std::chrono::seconds(10));
  CHECK(env.out == "v");
  auto missing = run_command({"llmx-no-such-program-xyz"}, {}, std::chrono::seconds(10));
  CHECK(missing.failure.find("llmx-no-such-program-xyz") != std::string::npos);
  auto start = std::chrono::steady_clock::now();
  auto slow = run_command({"sleep", "20"}, {}, std::chrono::milliseconds(200));
  CHECK(slow.failure.find("timed out") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  auto big = run_command({"sh", "-c", "head -c 100000 /dev/zero"}, {}, std::chrono::seconds(10), 1000);
  CHECK(big.failure.find("more than") != std::string::npos);
}

TEST_CASE("account git diff: merge base with the upstream, tracked and untracked changes") {
  if (!have_git()) {
    MESSAGE("git is not installed: skipped");
    return;
  }
  ScratchDir dir("llmx_gitdiff");
  std::string origin = dir.at("origin"), work = dir.at("work");
  fs::create_directories(origin);
  git_in(origin, {"init", "-q"});
  dir.write("origin/a.txt", "one\n");
  git_in(origin, {"add", "a.txt"});
  git_in(origin, {"commit", "-q", "-m", "first"});
  auto base = std::string(text::trim(git_in(origin, {"rev-parse", "HEAD"})));
  git_in(dir.path(), {"clone", "-q", origin, work});
  // A local commit on top of the upstream, a tracked change and an untracked file.
  dir.write("work/b.txt", "local\n");
  git_in(work, {"add", "b.txt"});
  git_in(work, {"commit", "-q", "-m", "local"});
  dir.write("work/a.txt", "one\ntwo\n");
  dir.write("work/new dir/c.txt", "brand new\n");
  dir.write("work/.gitignore", "*.log\n");
  dir.write("work/skip.log", "ignored\n");

  auto r = git_diff_to_remote(work + "/new dir", run_command_fn);  // any directory inside the work tree
  REQUIRE(r);
  CHECK(r->sha == base);
  CHECK(r->diff.find("diff --git a/a.txt b/a.txt") != std::string::npos);
  CHECK(r->diff.find("+two") != std::string::npos);
  CHECK(r->diff.find("diff --git a/b.txt b/b.txt") != std::string::npos);  // committed locally, not upstream
  CHECK(r->diff.find("new dir/c.txt") != std::string::npos);
  CHECK(r->diff.find("+brand new") != std::string::npos);
  CHECK(r->diff.find(".gitignore") != std::string::npos);
  CHECK(r->diff.find("skip.log") == std::string::npos);

  // Without any remote: HEAD.
  auto head = git_diff_to_remote(origin, run_command_fn);
  REQUIRE(head);
  CHECK(head->sha == base);
  CHECK(head->diff.empty());

  // Not a repository, or a repository without a commit.
  ScratchDir plain("llmx_gitdiff_plain");
  CHECK_FALSE(git_diff_to_remote(plain.path(), run_command_fn));
  git_in(plain.path(), {"init", "-q"});
  CHECK_FALSE(git_diff_to_remote(plain.path(), run_command_fn));
  CHECK_FALSE(git_diff_to_remote(plain.path() + "/missing", run_command_fn));
}
