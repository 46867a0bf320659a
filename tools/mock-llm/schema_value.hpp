// A JSON value that conforms to a JSON Schema, for requests that ask for structured output
// (`response_format` / `text.format` with a `json_schema`): what a model keeping to the schema
// would answer.
#pragma once

#include <simdjson.h>

#include <string>

namespace mockllm {

// Compact JSON text of a value `schema` accepts: objects with every property (required or not),
// the first enum or the const, one array item, "mock" for strings, 1 for numbers, true.
std::string value_for_schema(simdjson::dom::element schema);

} // namespace mockllm
