#include "protocol/model/tools.hpp"


#include "protocol/base/json_codec.hpp"
#include "protocol/model/prompt_assets.hpp"

namespace llmx::tools {

namespace {

ToolSpec spec(std::string name, std::string_view asset, std::string schema) {
  std::string description(prompts::get(asset));
  while (!description.empty() && description.back() == '\n') description.pop_back();
  return ToolSpec{std::move(name), std::move(description), RawJson{std::move(schema)}};
}

std::string failed(const std::string& detail) { return "failed to parse function arguments: " + detail; }

}  // namespace

const std::vector<ToolSpec>& default_tools() {
  static const std::vector<ToolSpec> tools = {
      spec("shell", "tool_shell",
           R"({"type":"object","properties":{)"
           R"("command":{"type":"array","items":{"type":"string"},"description":"The command as an argv array, e.g. [\"bash\", \"-lc\", \"ls -la\"]."},)"
           R"("justification":{"type":"string","description":"Only with with_escalated_permissions: one sentence on why the command needs to run outside the sandbox."},)"
           R"("timeout_ms":{"type":"number","description":"Timeout in milliseconds (default 10000)."},)"
           R"("with_escalated_permissions":{"type":"boolean","description":"Ask the user to run this command without sandbox restrictions."},)"
           R"("workdir":{"type":"string","description":"Working directory; relative paths are resolved against the session's directory."}},)"
           R"("required":["command"],"additionalProperties":false})"),
      spec("apply_patch", "tool_apply_patch",
           R"({"type":"object","properties":{"input":{"type":"string","description":"The whole patch, from *** Begin Patch to *** End Patch."}},"required":["input"],"additionalProperties":false})"),
      spec("update_plan", "tool_update_plan",
           R"({"type":"object","properties":{)"
           R"("explanation":{"type":"string","description":"Why the plan changed (optional)."},)"
           R"("plan":{"type":"array","description":"The steps, in order.","items":{"type":"object","properties":{)"
           R"("status":{"type":"string","description":"One of: pending, in_progress, completed"},"step":{"type":"string"}},)"
           R"("required":["step","status"],"additionalProperties":false}}},)"
           R"("required":["plan"],"additionalProperties":false})"),
  };
  return tools;
}

ParseResult parse_shell_args(std::string_view text, ShellArgs& out) {
  try {
    json::Parser p;
    auto root = p.parse(text);
    out = json::from_json<ShellArgs>(root);
    if (!out.timeout_ms && root.is_object())
      if (auto alias = json::get_int(root.get_object().value_unsafe(), "timeout")) out.timeout_ms = *alias;
    if (out.command.empty()) return {"command args are empty"};
    return {};
  } catch (const json::DecodeError& err) {
    return {failed(err.what())};
  }
}

ParseResult parse_apply_patch_args(std::string_view text, ApplyPatchArgs& out) {
  try {
    out = json::parse_as<ApplyPatchArgs>(text);
    return {};
  } catch (const json::DecodeError& err) {
    return {failed(err.what())};
  }
}

ParseResult parse_update_plan_args(std::string_view text, UpdatePlanArgs& out) {
  try {
    json::Parser p;
    auto root = p.parse(text);
    if (!root.is_object()) return {failed("invalid type: expected object")};
    for (auto obj = root.get_object().value_unsafe(); auto [key, _] : obj)
      if (key != "explanation" && key != "plan")
        return {failed(fmt::format("unknown field `{}`, expected `explanation` or `plan`", key))};
    if (auto plan = json::get(root.get_object().value_unsafe(), "plan"); plan && plan->is_array())
      for (auto items = plan->get_array().value_unsafe(); auto item : items)
        if (item.is_object())
          for (auto fields = item.get_object().value_unsafe(); auto [key, _] : fields)
            if (key != "step" && key != "status")
              return {failed(fmt::format("unknown field `{}`, expected `step` or `status`", key))};
    out = json::from_json<UpdatePlanArgs>(root);  // status: the StepStatus names, or an error naming them
    return {};
  } catch (const json::DecodeError& err) {
    return {failed(err.what())};
  }
}

}  // namespace llmx::tools
