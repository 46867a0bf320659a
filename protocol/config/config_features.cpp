// Feature flags (engine.md §4.5): canonical `[features]` keys, their legacy aliases and the
// top-level / profile legacy toggles, turned into ordered steps the loader applies.
#include <fmt/format.h>

#include "protocol/config/config_reader.hpp"

namespace llmx::config_detail {

namespace {

// Canonical feature names and the old spellings accepted inside [features].
constexpr std::pair<std::string_view, std::string_view> kFeatureKeys[] = {
    {"unified_exec", "unified_exec"},
    {"rmcp_client", "rmcp_client"},
    {"apply_patch_freeform", "apply_patch_freeform"},
    {"view_image_tool", "view_image_tool"},
    {"web_search_request", "web_search_request"},
    {"experimental_sandbox_command_assessment", "experimental_sandbox_command_assessment"},
    {"ghost_commit", "ghost_commit"},
    {"enable_experimental_windows_sandbox", "enable_experimental_windows_sandbox"},
    {"read_file_tool", "read_file_tool"},
    {"list_dir_tool", "list_dir_tool"},
    {"grep_files_tool", "grep_files_tool"},
    // legacy aliases
    {"experimental_use_unified_exec_tool", "unified_exec"},
    {"experimental_use_rmcp_client", "rmcp_client"},
    {"experimental_use_freeform_apply_patch", "apply_patch_freeform"},
    {"include_apply_patch_tool", "apply_patch_freeform"},
    {"web_search", "web_search_request"},
};

// Legacy booleans outside [features], in the order the reference applies them.
constexpr std::pair<std::string_view, std::string_view> kLegacyKeys[] = {
    {"include_apply_patch_tool", "apply_patch_freeform"},
    {"experimental_use_freeform_apply_patch", "apply_patch_freeform"},
    {"experimental_sandbox_command_assessment", "experimental_sandbox_command_assessment"},
    {"experimental_use_unified_exec_tool", "unified_exec"},
    {"experimental_use_rmcp_client", "rmcp_client"},
};

void push(std::vector<FeatureStep>& steps, const Section& t, std::string_view key, std::string_view feature) {
  if (auto v = t.boolean(key)) steps.push_back({std::string(feature), *v, t.path(key)});
}

}  // namespace

std::vector<FeatureStep> legacy_feature_steps(const Section& t, bool is_profile) {
  std::vector<FeatureStep> steps;
  for (auto [key, feature] : kLegacyKeys) push(steps, t, key, feature);
  if (is_profile) {
    push(steps, t, "tools_web_search", "web_search_request");
    push(steps, t, "tools_view_image", "view_image_tool");
  } else if (auto tools = t.table("tools")) {
    tools->check_keys({"web_search", "web_search_request", "view_image", "read_file", "list_dir", "grep_files"});
    push(steps, *tools, "web_search_request", "web_search_request");
    push(steps, *tools, "web_search", "web_search_request");
    push(steps, *tools, "view_image", "view_image_tool");
    push(steps, *tools, "read_file", "read_file_tool");
    push(steps, *tools, "list_dir", "list_dir_tool");
    push(steps, *tools, "grep_files", "grep_files_tool");
  }
  return steps;
}

std::vector<FeatureStep> feature_table_steps(const Section& t) {
  t.check_keys({"unified_exec", "rmcp_client", "apply_patch_freeform", "view_image_tool", "web_search_request",
                "experimental_sandbox_command_assessment", "ghost_commit", "enable_experimental_windows_sandbox",
                "experimental_use_unified_exec_tool", "experimental_use_rmcp_client",
                "experimental_use_freeform_apply_patch", "include_apply_patch_tool", "web_search", "read_file_tool",
                "list_dir_tool", "grep_files_tool"},
               "feature");
  std::vector<FeatureStep> steps;
  // Table order (sorted by key), as the reference's map.
  for (auto&& [k, v] : t.table())
    for (auto [key, feature] : kFeatureKeys)
      if (k.str() == key) push(steps, t, key, feature);
  return steps;
}

void apply_feature(Features& f, const std::string& feature, bool value) {
  if (feature == "unified_exec")
    f.unified_exec = value;
  else if (feature == "rmcp_client")
    f.rmcp_client = value;
  else if (feature == "apply_patch_freeform")
    f.apply_patch_freeform = value;
  else if (feature == "view_image_tool")
    f.view_image_tool = value;
  else if (feature == "web_search_request")
    f.web_search_request = value;
  else if (feature == "experimental_sandbox_command_assessment")
    f.experimental_sandbox_command_assessment = value;
  else if (feature == "ghost_commit")
    f.ghost_commit = value;
  else if (feature == "enable_experimental_windows_sandbox")
    f.enable_experimental_windows_sandbox = value;
  else if (feature == "read_file_tool")
    f.read_file_tool = value;
  else if (feature == "list_dir_tool")
    f.list_dir_tool = value;
  else if (feature == "grep_files_tool")
    f.grep_files_tool = value;
}

}  // namespace llmx::config_detail
