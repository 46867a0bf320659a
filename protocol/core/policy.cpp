#include "protocol/core/policy.hpp"

#include "protocol/base/json_codec.hpp"
#include "protocol/base/schema_gen.hpp"

namespace llmx {

void write_json(json::Writer& w, const SandboxPolicy& x) {
  w.begin_object();
  w.field("mode", enum_name(x.mode));
  if (x.mode == SandboxMode::workspace_write) {
    w.key("writable_roots");
    json::write_value(w, x.writable_roots);
    w.field("network_access", x.network_access);
    w.field("exclude_tmpdir_env_var", x.exclude_tmpdir_env_var);
    w.field("exclude_slash_tmp", x.exclude_slash_tmp);
  }
  w.end_object();
}

// One variant per mode, tagged by `mode`; only workspace-write carries the other fields, which
// write_json above always writes (they stay optional on input).
schema::Node json_schema(const SandboxPolicy*, schema::Context& c) {
  std::vector<schema::Node> variants;
  for (const auto& [mode, name] : EnumTraits<SandboxMode>::values) {
    schema::Node v = schema::fields_object<SandboxPolicy>(c);
    v.properties.front() = schema::prop("mode", schema::constant(std::string(name)));
    if (mode != SandboxMode::workspace_write) v.properties.resize(1);
    v.title = schema::pascal_case(name) + "SandboxPolicy";
    variants.push_back(std::move(v));
  }
  return schema::one_of(std::move(variants));
}

void read_json(json::Element e, SandboxPolicy& x) {
  if (!e.is_object()) json::type_error(e, "object");
  auto o = e.get_object().value_unsafe();
  auto mode = json::get_string(o, "mode");
  if (!mode) mode = json::get_string(o, "type");  // v2 spells the tag `type`
  if (!mode) throw json::DecodeError("missing field `mode`");
  // v2 uses camelCase enum values (readOnly, workspaceWrite, dangerFullAccess).
  std::string m(*mode);
  if (m == "readOnly") m = "read-only";
  if (m == "workspaceWrite") m = "workspace-write";
  if (m == "dangerFullAccess") m = "danger-full-access";
  auto parsed = enum_from_name<SandboxMode>(m);
  if (!parsed)
    throw json::DecodeError(fmt::format(
        "unknown variant `{}` for `mode`, expected one of `read-only`, `workspace-write`, "
        "`danger-full-access`",
        *mode));
  x = SandboxPolicy{};
  x.mode = *parsed;
  auto pick = [&](std::string_view snake, std::string_view camel) -> std::optional<json::Element> {
    if (auto v = json::get(o, snake)) return v;
    return json::get(o, camel);
  };
  if (auto roots = pick("writable_roots", "writableRoots")) {
    try {
      json::read_value(*roots, x.writable_roots);
    } catch (const json::DecodeError& err) {
      json::rethrow_in_field("writable_roots", err);
    }
  }
  auto flag = [&](std::string_view snake, std::string_view camel, bool& out) {
    if (auto v = pick(snake, camel)) {
      if (!v->is_bool()) throw json::DecodeError("invalid type: expected boolean", std::string(snake));
      out = v->get_bool().value_unsafe();
    }
  };
  flag("network_access", "networkAccess", x.network_access);
  flag("exclude_tmpdir_env_var", "excludeTmpdirEnvVar", x.exclude_tmpdir_env_var);
  flag("exclude_slash_tmp", "excludeSlashTmp", x.exclude_slash_tmp);
}

}  // namespace llmx
