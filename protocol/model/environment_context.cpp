#include "protocol/model/environment_context.hpp"

#include <pwd.h>
#include <unistd.h>

#include <fmt/format.h>

#include "protocol/model/model_catalog.hpp"
#include "protocol/config/project_doc.hpp"
#include "protocol/model/prompt_assets.hpp"

namespace llmx {

namespace {
// Read once: getpwuid opens and parses /etc/passwd on every call, and every conversation's
// first context asks (issue 18, conversations created at 10,000/s).
const std::string& login_shell_name() {
  static const std::string name = [] {
    struct passwd* pw = getpwuid(getuid());
    if (!pw || !pw->pw_shell) return std::string();
    std::string shell = pw->pw_shell;
    for (auto n : {"zsh", "bash"})
      if (shell.ends_with(std::string("/") + n)) return std::string(n);
    return std::string();
  }();
  return name;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      default: out += c;
    }
  }
  return out;
}
}  // namespace

std::string environment_context_xml(const Config& cfg) {
  std::string out = "<environment_context>\n";
  out += fmt::format("  <cwd>{}</cwd>\n", xml_escape(cfg.cwd));
  out += fmt::format("  <approval_policy>{}</approval_policy>\n", enum_name(cfg.approval_policy));
  out += fmt::format("  <sandbox_mode>{}</sandbox_mode>\n", enum_name(cfg.sandbox_policy.mode));
  out += fmt::format("  <network_access>{}</network_access>\n",
                     cfg.sandbox_policy.has_network() ? "enabled" : "restricted");
  if (cfg.sandbox_policy.mode == SandboxMode::workspace_write && !cfg.sandbox_policy.writable_roots.empty()) {
    out += "  <writable_roots>\n";
    for (const auto& r : cfg.sandbox_policy.writable_roots) out += fmt::format("    <root>{}</root>\n", xml_escape(r));
    out += "  </writable_roots>\n";
  }
  if (const auto& shell = login_shell_name(); !shell.empty()) out += fmt::format("  <shell>{}</shell>\n", shell);
  out += "</environment_context>";
  return out;
}

std::vector<ResponseItem> initial_context(const Config& cfg) {
  std::vector<ResponseItem> items;
  if (cfg.developer_instructions && !cfg.developer_instructions->empty())
    items.push_back(developer_message(*cfg.developer_instructions));
  if (cfg.user_instructions)
    items.push_back(user_message(project_doc::instructions_message(cfg.cwd, *cfg.user_instructions)));
  items.push_back(user_message(environment_context_xml(cfg)));
  return items;
}

std::string system_instructions(const Config& cfg) {
  if (cfg.base_instructions && !cfg.base_instructions->empty()) return *cfg.base_instructions;
  return std::string(prompts::get("system"));
}

Prompt base_prompt(const Config& cfg, const std::string& conversation_id, const models::ModelSpec& spec) {
  auto family = models::find_family(cfg.model);
  Prompt p;
  p.model = cfg.model;
  p.instructions = system_instructions(cfg);
  p.conversation_id = conversation_id;
  p.parallel_tool_calls = family.supports_parallel_tool_calls;
  p.reasoning = models::sends_reasoning(spec, cfg.model_supports_reasoning_summaries);
  p.reasoning_effort = cfg.reasoning_effort;
  // Chat carries an effort only to a model its provider says reasons (LiteLLM refuses it
  // elsewhere), and only the three levels every backend behind LiteLLM maps.
  const auto& effort = cfg.reasoning_effort;
  if (spec.meta.reasoning.value_or(false) && p.reasoning && effort &&
      (*effort == "low" || *effort == "medium" || *effort == "high"))
    p.chat_reasoning_effort = effort;
  p.upstream = spec.meta.upstream;
  p.output_cap = spec.meta.max_output_tokens;
  p.cache_markers = models::wants_cache_markers(spec, cfg.provider);
  p.reasoning_summary = cfg.reasoning_summary;
  if (family.support_verbosity) p.verbosity = cfg.model_verbosity;
  return p;
}

}  // namespace llmx
