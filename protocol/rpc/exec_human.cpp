#include "protocol/rpc/exec_human.hpp"

#include <fmt/format.h>

#include "protocol/rpc/mcp_client_api.hpp"
#include "protocol/rpc/v2_events.hpp"

namespace llmx::exec_human {

namespace {

constexpr std::string_view kBold = "1", kDim = "2", kRed = "31", kGreen = "32", kYellow = "33", kCyan = "36",
                           kMagenta = "35";

size_t count_lines(std::string_view text) {
  if (text.empty()) return 0;
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n + (text.back() != '\n');
}

std::string duration_text(const Duration& d) {
  double s = static_cast<double>(d.secs) + static_cast<double>(d.nanos) / 1e9;
  return s < 1 ? fmt::format("{}ms", static_cast<int64_t>(s * 1000)) : fmt::format("{:.1f}s", s);
}

}  // namespace

std::string change_counts(const FileChange& change) {
  size_t added = 0, removed = 0;
  if (auto* a = change.get_if<FileAdd>()) added = count_lines(a->content);
  if (auto* d = change.get_if<FileDelete>()) removed = count_lines(d->content);
  if (auto* u = change.get_if<FileUpdate>()) {
    std::string_view diff(u->unified_diff);
    while (!diff.empty()) {
      auto nl = diff.find('\n');
      auto line = diff.substr(0, nl);
      if (line.starts_with('+') && !line.starts_with("+++")) ++added;
      if (line.starts_with('-') && !line.starts_with("---")) ++removed;
      if (nl == std::string_view::npos) break;
      diff.remove_prefix(nl + 1);
    }
  }
  return fmt::format("+{} -{}", added, removed);
}

std::string Printer::paint(std::string_view code, std::string_view text) const {
  return color_ ? fmt::format("\x1b[{}m{}\x1b[0m", code, text) : std::string(text);
}

std::string Printer::header(const Header& h, const std::string& thread_id) const {
  std::string out = paint(kBold, "llmx " + h.version) + "\n";
  auto row = [&](std::string_view key, const std::string& value) { out += fmt::format("{}: {}\n", paint(kDim, key), value); };
  row("model", h.model);
  row("provider", h.provider);
  row("workdir", h.cwd);
  row("sandbox", h.sandbox);
  row("approval", h.approval);
  row("thread id", thread_id);
  return out + paint(kDim, "--------") + "\n";
}

std::string Printer::on(const Event& ev) {
  const auto& msg = ev.msg;
  if (auto* a = msg.get_if<AgentMessageEvent>()) {
    std::string out = pending_message_ ? paint(kCyan, "llmx: ") + *pending_message_ + "\n" : "";
    pending_message_ = a->message;
    return out;
  }
  if (msg.is<TaskCompleteEvent>()) {
    pending_message_.reset();  // the final answer: stdout's
  } else if (pending_message_ && !msg.is<TokenCountEvent>() && !msg.is<AgentMessageDeltaEvent>() &&
             !msg.is<RawResponseItemEvent>() && !msg.is<ItemCompletedEvent>() && !msg.is<ItemStartedEvent>() &&
             !msg.is<AgentMessageContentDeltaEvent>()) {
    std::string before = paint(kCyan, "llmx: ") + *pending_message_ + "\n";
    pending_message_.reset();
    return before + on(ev);
  }
  if (auto* b = msg.get_if<ExecCommandBeginEvent>())
    return paint(kMagenta, "$ ") + paint(kBold, v2::join_command(b->command)) + paint(kDim, "  in " + b->cwd) + "\n";
  if (auto* e = msg.get_if<ExecCommandEndEvent>()) {
    std::string out = e->exit_code == 0 ? paint(kGreen, fmt::format("  exited 0 in {}", duration_text(e->duration)))
                                        : paint(kRed, fmt::format("  exited {} in {}", e->exit_code,
                                                                  duration_text(e->duration)));
    out += "\n";
    std::string_view rest(e->aggregated_output);
    size_t shown = 0, total = count_lines(rest);
    while (!rest.empty() && shown < kOutputLines) {
      auto nl = rest.find('\n');
      out += paint(kDim, "  " + std::string(rest.substr(0, nl))) + "\n";
      ++shown;
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    }
    if (total > shown) out += paint(kDim, fmt::format("  … {} more lines", total - shown)) + "\n";
    return out;
  }
  if (auto* p = msg.get_if<PatchApplyBeginEvent>()) {
    std::string out = paint(kMagenta, "apply_patch") + (p->auto_approved ? "" : paint(kDim, " (approved)")) + "\n";
    for (const auto& [path, change] : p->changes) {
      char mark = change.is<FileAdd>() ? 'A' : change.is<FileDelete>() ? 'D' : 'M';
      out += fmt::format("  {} {} {}\n", mark, path, paint(kDim, "(" + change_counts(change) + ")"));
    }
    return out;
  }
  if (auto* p = msg.get_if<PatchApplyEndEvent>())
    return p->success ? paint(kGreen, "  patch applied") + "\n"
                      : paint(kRed, "  patch failed: " + (p->stderr_text.empty() ? p->stdout_text : p->stderr_text)) + "\n";
  if (auto* plan = msg.get_if<PlanUpdateEvent>()) {
    std::string out = paint(kCyan, "plan") + (plan->explanation ? ": " + *plan->explanation : "") + "\n";
    for (const auto& step : plan->plan) {
      std::string_view box = step.status == StepStatus::completed     ? "[x]"
                             : step.status == StepStatus::in_progress ? "[>]"
                                                                      : "[ ]";
      out += fmt::format("  {} {}\n", box, step.step);
    }
    return out;
  }
  if (auto* r = msg.get_if<AgentReasoningEvent>()) return paint(kDim, "thinking: " + r->text) + "\n";
  if (auto* mb = msg.get_if<McpToolCallBeginEvent>())
    return paint(kMagenta, "tool ") + paint(kBold, mb->invocation.server + "/" + mb->invocation.tool) +
           (mb->invocation.arguments ? paint(kDim, " " + mb->invocation.arguments->text) : "") + "\n";
  if (auto* me = msg.get_if<McpToolCallEndEvent>()) {
    bool ok = !mcp::read_call_end(me->result.text).failed;
    return paint(ok ? kGreen : kRed, fmt::format("  {} in {}", ok ? "done" : "failed", duration_text(me->duration))) +
           "\n";
  }
  if (auto* w = msg.get_if<WarningEvent>()) return paint(kYellow, "warning: " + w->message) + "\n";
  if (auto* s = msg.get_if<StreamErrorEvent>()) return paint(kYellow, "reconnecting: " + s->message) + "\n";
  // Errors: `llmx exec` ends with the one `error:` line of the turn's failure.
  if (auto* tc = msg.get_if<TokenCountEvent>()) {
    if (tc->info) usage_ = tc->info->total_token_usage;
    return {};
  }
  if (msg.is<TaskCompleteEvent>() || msg.is<TurnAbortedEvent>()) {
    std::string out;
    if (auto* a = msg.get_if<TurnAbortedEvent>()) out += paint(kRed, "turn aborted: " + std::string(enum_name(a->reason))) + "\n";
    out += paint(kDim, fmt::format("tokens used: {} (input {}, cached {}, output {})", usage_.total_tokens,
                                   usage_.input_tokens, usage_.cached_input_tokens, usage_.output_tokens)) +
           "\n";
    return out;
  }
  return {};
}

}  // namespace llmx::exec_human
