#include "protocol/model/tools.hpp"


#include "protocol/base/json_codec.hpp"
#include "protocol/model/model_catalog.hpp"
#include "protocol/model/prompt_assets.hpp"

#include <algorithm>

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

namespace {

const std::vector<ToolSpec>& file_tools() {
  static const std::vector<ToolSpec> tools = {
      spec("read_file", "tool_read_file",
           R"({"type":"object","properties":{)"
           R"("file_path":{"type":"string","description":"Absolute path of the file."},)"
           R"("indentation":{"type":"object","properties":{)"
           R"("anchor_line":{"type":"number","description":"The line whose block to show (default: offset)."},)"
           R"("include_header":{"type":"boolean","description":"Also show comments and decorators right above (default true)."},)"
           R"("include_siblings":{"type":"boolean","description":"Show the whole enclosing block, not just the anchor's (default false)."},)"
           R"("max_levels":{"type":"number","description":"How many enclosing blocks' headers to show; 0 = all (default)."},)"
           R"("max_lines":{"type":"number","description":"At most this many lines (default: limit)."}},"additionalProperties":false},)"
           R"("limit":{"type":"number","description":"At most this many lines (default 2000)."},)"
           R"("mode":{"type":"string","description":"slice (default): lines from offset; indentation: the block around a line."},)"
           R"("offset":{"type":"number","description":"First line, 1-based (default 1)."}},)"
           R"("required":["file_path"],"additionalProperties":false})"),
      spec("list_dir", "tool_list_dir",
           R"({"type":"object","properties":{)"
           R"("depth":{"type":"number","description":"How deep to descend (default 2)."},)"
           R"("dir_path":{"type":"string","description":"Absolute path of the directory."},)"
           R"("limit":{"type":"number","description":"At most this many entries (default 25)."},)"
           R"("offset":{"type":"number","description":"First entry, 1-based (default 1)."}},)"
           R"("required":["dir_path"],"additionalProperties":false})"),
      spec("grep_files", "tool_grep_files",
           R"({"type":"object","properties":{)"
           R"("include":{"type":"string","description":"Only files matching this glob, e.g. *.rs"},)"
           R"("limit":{"type":"number","description":"At most this many paths (default 100, at most 2000)."},)"
           R"("path":{"type":"string","description":"Where to search (default: the working directory)."},)"
           R"("pattern":{"type":"string","description":"The regular expression to search for."}},)"
           R"("required":["pattern"],"additionalProperties":false})"),
  };
  return tools;
}

}  // namespace

std::vector<std::string> enabled_file_tools(const Config& config) {
  auto family = models::find_family(config.model);
  const auto& listed = family.experimental_supported_tools;
  auto on = [&](std::string_view name, bool flag) {
    return flag || std::find(listed.begin(), listed.end(), name) != listed.end();
  };
  std::vector<std::string> names;
  if (on("read_file", config.features.read_file_tool)) names.emplace_back("read_file");
  if (on("list_dir", config.features.list_dir_tool)) names.emplace_back("list_dir");
  if (on("grep_files", config.features.grep_files_tool)) names.emplace_back("grep_files");
  return names;
}

std::vector<ToolSpec> builtin_tools(const Config& config) {
  auto tools = default_tools();
  for (const auto& name : enabled_file_tools(config))
    for (const auto& t : file_tools())
      if (t.name == name) tools.push_back(t);
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
