// An MCP tool's inputSchema made into what providers accept (engine.md §10.3 and the §5.2
// subset): string, number (integer too), boolean, array with items, object with sorted
// properties, required and additionalProperties. Missing types are inferred, unions take their
// first usable member, `$ref`s are resolved against the schema's own `$defs`/`definitions`, and
// everything else is dropped. A schema that cannot be made so, or is too large, is refused with
// the reason, and the tool is left out.
#pragma once

#include <string>
#include <variant>

#include "protocol/base/reflect.hpp"

namespace llmx::mcp {

struct SchemaRefused {
  std::string reason;
};

inline constexpr size_t kMaxToolSchemaBytes = 64 * 1024;

// The provider-ready schema (compact JSON text), or why the tool cannot be offered.
std::variant<std::string, SchemaRefused> provider_schema(const RawJson& input_schema);

}  // namespace llmx::mcp
