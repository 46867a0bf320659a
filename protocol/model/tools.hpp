// The tools llmx offers the model on the Chat wire (DECISIONS E9) and their typed arguments.
// Schemas are written out here; descriptions are text assets in protocol/prompts/ (E13).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocol/model/chat_request.hpp"
#include "protocol/config/config.hpp"
#include "protocol/core/events.hpp"

namespace llmx::tools {

// shell, apply_patch, update_plan, in that order.
const std::vector<ToolSpec>& default_tools();

// The optional file tools (read_file, list_dir, grep_files) this configuration turns on: by
// [features] / [tools] flags, or because the model's family lists them (engine.md §5.1).
std::vector<std::string> enabled_file_tools(const Config& config);
// The default tools and the enabled file tools, in that order.
std::vector<ToolSpec> builtin_tools(const Config& config);

struct ShellArgs {
  std::vector<std::string> command;
  std::optional<std::string> workdir;
  std::optional<int64_t> timeout_ms;  // `timeout` is accepted as an alias
  std::optional<bool> with_escalated_permissions;
  std::optional<std::string> justification;
  LLMX_FIELDS(v("command", s.command); v("workdir", s.workdir); v("timeout_ms", s.timeout_ms);
              v("with_escalated_permissions", s.with_escalated_permissions);
              v("justification", s.justification))
};

struct ApplyPatchArgs {
  std::string input;
  LLMX_FIELDS(v("input", s.input))
};

struct UpdatePlanArgs {
  Nullable<std::string> explanation;
  std::vector<PlanItem> plan;
  LLMX_FIELDS(v("explanation", s.explanation); v("plan", s.plan))
};

// Parsers for the model's JSON arguments; the error text is what the model is told
// ("failed to parse function arguments: ...").
struct ParseResult {
  std::optional<std::string> error;
};
ParseResult parse_shell_args(std::string_view json, ShellArgs& out);
ParseResult parse_apply_patch_args(std::string_view json, ApplyPatchArgs& out);
// Strict: unknown keys and statuses other than pending/in_progress/completed are rejected.
ParseResult parse_update_plan_args(std::string_view json, UpdatePlanArgs& out);

}  // namespace llmx::tools
