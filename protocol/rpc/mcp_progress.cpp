#include "protocol/rpc/mcp_progress.hpp"

#include <fmt/format.h>

#include "protocol/rpc/v2_events.hpp"

namespace llmx::mcp {

namespace {

constexpr size_t kMaxShown = 80;

std::string one_line(std::string text) {
  if (auto nl = text.find('\n'); nl != std::string::npos) text = text.substr(0, nl) + " …";
  if (text.size() > kMaxShown) {
    size_t cut = kMaxShown;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // whole UTF-8 characters
    text = text.substr(0, cut) + "…";
  }
  return text;
}

std::string files_of(const std::map<std::string, FileChange>& changes) {
  std::string out;
  size_t n = 0;
  for (const auto& [path, _] : changes) {
    if (n++ == 3) return out + fmt::format(" and {} more", changes.size() - 3);
    if (!out.empty()) out += ", ";
    out += path.substr(path.rfind('/') + 1);
  }
  return out;
}

}  // namespace

std::string progress_command(const std::vector<std::string>& argv) {
  bool shell = argv.size() == 3 && (argv[1] == "-lc" || argv[1] == "-c") &&
               (argv[0].ends_with("bash") || argv[0].ends_with("sh") || argv[0].ends_with("zsh"));
  return one_line(shell ? argv[2] : v2::join_command(argv));
}

std::optional<std::string> ProgressReporter::send(std::string message, Clock::time_point now) {
  last_ = now;
  ++sent_;
  return message;
}

std::optional<std::string> ProgressReporter::maybe(std::string message, Clock::time_point now) {
  if (last_ && now - *last_ < interval_) return std::nullopt;
  return send(std::move(message), now);
}

std::optional<std::string> ProgressReporter::on_event(const EventMsg& msg, Clock::time_point now) {
  if (msg.is<TaskStartedEvent>()) return send("working", now);
  if (msg.is<AgentMessageDeltaEvent>()) return maybe(fmt::format("answer: {} tokens", ++answer_tokens_), now);
  if (msg.is<AgentReasoningDeltaEvent>()) return maybe(fmt::format("thinking: {} tokens", ++thinking_tokens_), now);
  if (auto* b = msg.get_if<ExecCommandBeginEvent>())
    return send(fmt::format("running `{}`", progress_command(b->command)), now);
  if (auto* e = msg.get_if<ExecCommandEndEvent>())
    return send(e->exit_code == 0 ? std::string("command succeeded")
                                  : fmt::format("command failed with exit code {}", e->exit_code),
                now);
  if (auto* a = msg.get_if<ExecApprovalRequestEvent>())
    return send(fmt::format("waiting for approval to run `{}`", progress_command(a->command)), now);
  if (auto* a = msg.get_if<ApplyPatchApprovalRequestEvent>())
    return send(fmt::format("waiting for approval to edit {}", files_of(a->changes)), now);
  if (auto* p = msg.get_if<PatchApplyBeginEvent>()) return send(fmt::format("editing {}", files_of(p->changes)), now);
  if (auto* m = msg.get_if<McpToolCallBeginEvent>())
    return send(fmt::format("calling {}.{}", m->invocation.server, m->invocation.tool), now);
  if (auto* e = msg.get_if<ElicitationRequestEvent>())
    return send(fmt::format("waiting for an answer to {}", e->server_name), now);
  if (auto* s = msg.get_if<StreamErrorEvent>()) return send(one_line("reconnecting: " + s->message), now);
  if (auto* e = msg.get_if<ErrorEvent>()) return send(one_line("error: " + e->message), now);
  if (msg.is<TaskCompleteEvent>())
    return send(answer_tokens_ ? fmt::format("done: answer of {} tokens", answer_tokens_) : std::string("done"), now);
  if (auto* t = msg.get_if<TurnAbortedEvent>())
    return send(fmt::format("stopped: {}", enum_name(t->reason)), now);
  return std::nullopt;
}

}  // namespace llmx::mcp
