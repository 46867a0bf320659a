#include "protocol/core/events.hpp"

#include "protocol/base/base64.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/base/schema_gen.hpp"

namespace llmx {

TokenUsage& TokenUsage::operator+=(const TokenUsage& o) {
  input_tokens += o.input_tokens;
  cached_input_tokens += o.cached_input_tokens;
  output_tokens += o.output_tokens;
  reasoning_output_tokens += o.reasoning_output_tokens;
  total_tokens += o.total_tokens;
  return *this;
}

void write_json(json::Writer& w, const Base64Bytes& x) { w.string(base64::encode(x.bytes)); }

schema::Node json_schema(const Base64Bytes*, schema::Context&) {
  schema::Node n = schema::string();
  n.description = "standard base64 (with padding)";
  n.inline_type = true;
  return n;
}

schema::Node json_schema(const SessionSource*, schema::Context&) {
  using namespace schema;
  Node named = enum_strings({"cli", "vscode", "exec", "mcp", "unknown"});
  Node subagent = one_of({enum_strings({"review", "compact"}), object({prop("other", string())})});
  return one_of({named, object({prop("subagent", subagent)}, "SubagentSessionSource")});
}

schema::Node json_schema(const RecordedEvents*, schema::Context& c) {
  schema::Node n = schema::node_of<std::vector<EventMsg>>(c);
  n.inline_type = true;
  return n;
}

void read_json(json::Element e, Base64Bytes& x) {
  if (!e.is_string()) json::type_error(e, "base64 string");
  auto decoded = base64::decode(e.get_string().value_unsafe());
  if (!decoded) throw json::DecodeError("invalid base64 data");
  x.bytes = std::move(*decoded);
}

}  // namespace llmx
