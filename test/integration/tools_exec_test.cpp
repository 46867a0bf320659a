// Tools through `llmx exec --core-events`: the real binary runs the mock model's shell, apply_patch and
// update_plan calls in a temp git workspace, under the sandbox modes of engine.md §6 / DECISIONS E11.
// `bash -lc` may print login-profile noise on stderr here, so checks look at stdout and files.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "protocol/base/base64.hpp"
#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// A temp LLMX_HOME, a git workspace and the mock model, for `llmx exec` runs in the workspace.
struct ExecWorkspace {
  TempDir home{"llmx-tools-home"};
  TempDir ws{"llmx-tools-ws"};
  MockLlm mock;

  ExecWorkspace() {
    ChildProcess git({.argv = {"/usr/bin/git", "init", "-q", ws.path()}});
    REQUIRE(git.wait().ok());
    REQUIRE(fs::is_directory(ws.file(".git")));
  }

  // `llmx exec --core-events <flags...> -- <prompt>` in the workspace; the events, parsed.
  std::vector<Message> exec(const std::vector<std::string>& flags, const std::string& prompt,
                            ExecResult* raw = nullptr) {
    auto r = run_exec_json(flags, prompt, llmx_env(home.path(), mock.url()), kDefaultTimeout, ws.path());
    REQUIRE(r.problem() == "");
    REQUIRE_FALSE(r.events.empty());
    CHECK(r.events.front().str("/msg/type") == "session_configured");
    if (raw) *raw = std::move(r.raw);
    return r.events;
  }
};

std::string type_of(const Message& e) { return e.str_or("/msg/type", ""); }


// The single event of this type; fails the test when there is not exactly one.
Message only(const std::vector<Message>& events, std::string_view type) {
  auto found = events_of_type(events, type);
  INFO("events of type " << type);
  REQUIRE(found.size() == 1);
  return found.front();
}

// The output deltas of one stream, decoded and concatenated.
std::string decoded_deltas(const std::vector<Message>& events, std::string_view stream) {
  std::string out;
  for (const auto& e : events_of_type(events, "exec_command_output_delta")) {
    if (e.str("/msg/stream") != stream) continue;
    auto bytes = llmx::base64::decode(e.str("/msg/chunk"));
    REQUIRE(bytes.has_value());
    out += *bytes;
  }
  return out;
}

// Flags that take /tmp and $TMPDIR out of the workspace-write roots, so a temp dir next to the
// workspace is really "outside" (both are writable by default, as in the reference).
const std::vector<std::string> kWorkspaceOnly = {"-s", "workspace-write",
                                                 "-c", "sandbox_workspace_write.exclude_slash_tmp=true",
                                                 "-c", "sandbox_workspace_write.exclude_tmpdir_env_var=true"};

}  // namespace

TEST_CASE("tools/exec: a shell call under workspace-write streams begin, output deltas and end") {
  ExecWorkspace w;
  // quote=4000: the follow-up answer quotes the whole tool output, login-profile noise included.
  auto events = w.exec({"-s", "workspace-write"}, "@mock:shell quote=4000 cmd=printf 'tools-marker-%s\\n' 42");

  auto begin = only(events, "exec_command_begin");
  CHECK(begin.str("/msg/call_id") == "call_shell_1");
  CHECK(begin.text("/msg/command") == R"(["bash","-lc","printf 'tools-marker-%s\\n' 42"])");
  CHECK(fs::equivalent(begin.str("/msg/cwd"), w.ws.path()));

  auto deltas = events_of_type(events, "exec_command_output_delta");
  REQUIRE_FALSE(deltas.empty());
  for (const auto& d : deltas) CHECK(d.str("/msg/call_id") == "call_shell_1");
  CHECK(decoded_deltas(events, "stdout") == "tools-marker-42\n");

  auto end = only(events, "exec_command_end");
  CHECK(end.integer("/msg/exit_code") == 0);
  CHECK(end.str("/msg/stdout") == "tools-marker-42\n");
  CHECK(contains(end.str("/msg/formatted_output"), "Exit code: 0"));
  CHECK(contains(end.str("/msg/aggregated_output"), "tools-marker-42\n"));

  // begin < every delta < end < task_complete.
  size_t ib = 0, ie = 0, first_delta = SIZE_MAX, last_delta = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const auto t = type_of(events[i]);
    if (t == "exec_command_begin") ib = i;
    if (t == "exec_command_end") ie = i;
    if (t == "exec_command_output_delta") first_delta = std::min(first_delta, i), last_delta = i;
  }
  CHECK(ib < first_delta);
  CHECK(last_delta < ie);
  CHECK(ie < events.size() - 1);

  // The model got the output and the final answer quotes it.
  CHECK(contains(events.back().str("/msg/last_agent_message"), "The command printed: Exit code: 0"));
  CHECK(contains(events.back().str("/msg/last_agent_message"), "tools-marker-42"));
  auto outputs = tool_messages(recorded_requests(w.mock));
  REQUIRE(outputs.size() == 1);
  CHECK(contains(outputs[0], "tools-marker-42"));
}

TEST_CASE("tools/exec: apply_patch under workspace-write creates the file with patch and diff events") {
  ExecWorkspace w;
  auto events = w.exec({"-s", "workspace-write"}, "@mock:apply_patch file=created.txt");
  REQUIRE(fs::exists(w.ws.file("created.txt")));
  std::ifstream f(w.ws.file("created.txt"));
  std::string content((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(content == "hello from mock-llm\n");

  auto begin = only(events, "patch_apply_begin");
  CHECK(begin.str("/msg/call_id") == "call_patch_1");
  CHECK(begin.boolean("/msg/auto_approved"));
  CHECK(contains(begin.text("/msg/changes"), "created.txt"));
  CHECK(contains(begin.text("/msg/changes"), "hello from mock-llm"));
  auto end = only(events, "patch_apply_end");
  CHECK(end.boolean("/msg/success"));
  CHECK(contains(end.str("/msg/stdout"), "created.txt"));
  auto diff = events_of_type(events, "turn_diff");
  REQUIRE_FALSE(diff.empty());
  const auto unified = diff.back().str("/msg/unified_diff");
  CHECK(contains(unified, "+++ b/created.txt"));
  CHECK(contains(unified, "+hello from mock-llm"));
  size_t ib = 0, ie = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (type_of(events[i]) == "patch_apply_begin") ib = i;
    if (type_of(events[i]) == "patch_apply_end") ie = i;
  }
  CHECK(ib < ie);
  CHECK(contains(events.back().str("/msg/last_agent_message"), "Patch result: Exit code: 0"));
}

TEST_CASE("tools/exec: update_plan gives a plan_update event") {
  ExecWorkspace w;
  auto events = w.exec({}, "@mock:plan");
  auto plan = only(events, "plan_update");
  CHECK(plan.str("/msg/explanation") == "mock plan");
  CHECK(plan.str("/msg/plan/0/step") == "Write code");
  CHECK(plan.str("/msg/plan/0/status") == "in_progress");
  CHECK(plan.str("/msg/plan/1/step") == "Test it");
  CHECK(plan.str("/msg/plan/1/status") == "pending");
  CHECK(events.back().str("/msg/last_agent_message") == "Plan updated.");
  auto outputs = tool_messages(recorded_requests(w.mock));
  REQUIRE(outputs.size() == 1);
  CHECK(outputs[0] == "Plan updated");
}

TEST_CASE("tools/exec: workspace-write keeps writes inside the workspace") {
  ExecWorkspace w;
  TempDir outside{"llmx-tools-outside"};
  const std::string target = outside.file("file");
  auto events = w.exec(kWorkspaceOnly, "@mock:shell cmd=echo in > inside.txt; echo x > " + target);
  auto end = only(events, "exec_command_end");
  CHECK(end.integer("/msg/exit_code") != 0);
  CHECK(fs::exists(w.ws.file("inside.txt")));  // the workspace itself is writable
  CHECK_FALSE(fs::exists(target));
  // The model is told the command failed.
  auto outputs = tool_messages(recorded_requests(w.mock));
  REQUIRE(outputs.size() == 1);
  CHECK_FALSE(contains(outputs[0], "Exit code: 0"));
}

TEST_CASE("tools/exec: workspace-write keeps <workspace>/.git read-only") {
  ExecWorkspace w;
  auto events = w.exec(kWorkspaceOnly, "@mock:shell cmd=echo ok > ok.txt; echo x > .git/x");
  auto end = only(events, "exec_command_end");
  CHECK(end.integer("/msg/exit_code") != 0);
  CHECK(fs::exists(w.ws.file("ok.txt")));
  CHECK_FALSE(fs::exists(w.ws.file(".git/x")));
  // Nothing else under .git was touched either: HEAD still reads as a fresh repository.
  std::ifstream head(w.ws.file(".git/HEAD"));
  std::string line;
  std::getline(head, line);
  CHECK(line.rfind("ref: refs/heads/", 0) == 0);
}

TEST_CASE("tools/exec: the default read-only sandbox refuses a patch clearly and never asks") {
  ExecWorkspace w;
  auto events = w.exec({}, "@mock:apply_patch file=ro.txt");
  CHECK_FALSE(fs::exists(w.ws.file("ro.txt")));
  CHECK(events_of_type(events, "patch_apply_begin").empty());
  CHECK(events_of_type(events, "apply_patch_approval_request").empty());
  CHECK(events_of_type(events, "exec_approval_request").empty());
  auto outputs = tool_messages(recorded_requests(w.mock));
  REQUIRE(outputs.size() == 1);
  INFO(outputs[0]);
  CHECK(contains(outputs[0], "This patch was not run: it needs the user's approval"));
  CHECK(contains(outputs[0], "read-only"));
  CHECK(contains(outputs[0], "cannot ask for approvals"));

  // A shell write under read-only fails in the sandbox, and exec does not retry it unsandboxed.
  auto shell = w.exec({}, "@mock:shell cmd=touch ro-shell.txt");
  CHECK(only(shell, "exec_command_end").integer("/msg/exit_code") != 0);
  CHECK(events_of_type(shell, "exec_approval_request").empty());
  CHECK(events_of_type(shell, "exec_command_begin").size() == 1);
  CHECK_FALSE(fs::exists(w.ws.file("ro-shell.txt")));
}

TEST_CASE("tools/exec: danger-full-access with approvals never writes anywhere") {
  ExecWorkspace w;
  TempDir outside{"llmx-tools-outside"};
  const std::string target = outside.file("file");
  auto events = w.exec({"-s", "danger-full-access", "-a", "never"},
                       "@mock:shell cmd=echo x > " + target + " && echo y > .git/x && echo all-written");
  auto end = only(events, "exec_command_end");
  CHECK(end.integer("/msg/exit_code") == 0);
  CHECK(end.str("/msg/stdout") == "all-written\n");
  CHECK(fs::exists(target));
  CHECK(fs::exists(w.ws.file(".git/x")));
  CHECK(events_of_type(events, "exec_approval_request").empty());
}
