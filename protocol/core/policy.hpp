// Approval policy and sandbox policy: the two settings that decide what a turn may do alone.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "protocol/base/json_reader.hpp"
#include "protocol/base/json_writer.hpp"
#include "protocol/base/reflect.hpp"

namespace llmx {

enum class AskForApproval { untrusted, on_failure, on_request, never };
template <>
struct EnumTraits<AskForApproval> {
  static constexpr std::array<std::pair<AskForApproval, std::string_view>, 4> values{{
      {AskForApproval::untrusted, "untrusted"},
      {AskForApproval::on_failure, "on-failure"},
      {AskForApproval::on_request, "on-request"},
      {AskForApproval::never, "never"},
  }};
};

enum class SandboxMode { read_only, workspace_write, danger_full_access };
template <>
struct EnumTraits<SandboxMode> {
  static constexpr std::array<std::pair<SandboxMode, std::string_view>, 3> values{{
      {SandboxMode::read_only, "read-only"},
      {SandboxMode::workspace_write, "workspace-write"},
      {SandboxMode::danger_full_access, "danger-full-access"},
  }};
};

// `{"mode": "workspace-write", "writable_roots": [...], "network_access": false, ...}`; the extra
// keys exist only for workspace-write. Input also accepts the camelCase keys (DECISIONS P8).
struct SandboxPolicy {
  friend bool operator==(const SandboxPolicy&, const SandboxPolicy&) = default;
  SandboxMode mode = SandboxMode::read_only;
  std::vector<std::string> writable_roots;
  bool network_access = false;
  bool exclude_tmpdir_env_var = false;
  bool exclude_slash_tmp = false;
  template <class S, class V>
  static void fields(S& s, V&& v) {
    v("mode", s.mode);
    v("writable_roots", s.writable_roots, Field::defaulted);
    v("network_access", s.network_access, Field::defaulted);
    v("exclude_tmpdir_env_var", s.exclude_tmpdir_env_var, Field::defaulted);
    v("exclude_slash_tmp", s.exclude_slash_tmp, Field::defaulted);
  }
  bool has_network() const {
    return mode == SandboxMode::danger_full_access ||
           (mode == SandboxMode::workspace_write && network_access);
  }
};
void write_json(json::Writer& w, const SandboxPolicy& x);
void read_json(json::Element e, SandboxPolicy& x);
namespace schema {
struct Node;
class Context;
}  // namespace schema
// Its JSON Schema / TypeScript shape, kept beside the custom encoder (schema_gen.hpp).
schema::Node json_schema(const SandboxPolicy*, schema::Context& c);

enum class ReviewDecision { approved, approved_for_session, denied, abort };
template <>
struct EnumTraits<ReviewDecision> {
  static constexpr std::array<std::pair<ReviewDecision, std::string_view>, 4> values{{
      {ReviewDecision::approved, "approved"},
      {ReviewDecision::approved_for_session, "approved_for_session"},
      {ReviewDecision::denied, "denied"},
      {ReviewDecision::abort, "abort"},
  }};
};

}  // namespace llmx
