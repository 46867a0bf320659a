// The exported protocol: which wire types `llmx app-server generate-json-schema` and
// `generate-ts` write, under which names and in which directory (protocol.md §4.8). Adding a type
// is one line in wire_catalog.cpp:
//
//   reg.add<api::NewConversationParams>("NewConversationParams", Dir::v1);
//
// and a method of a request/notification union is one more:
//
//   reg.request<api::NewConversationParams>("ClientRequest", "newConversation");
#pragma once

#include <string>

#include "protocol/schema_gen.hpp"

namespace llmx::schema {

// Every exported type (built once, on first use).
const Registry& wire_catalog();

// DIR/llmx_app_server_protocol.schemas.json plus one pretty-printed schema per exported type:
// DIR/X.json (framing, core model), DIR/v1/X.json, DIR/v2/X.json.
void write_json_schema_bundle(const std::string& out_dir);

// One .ts per type (v2 types under DIR/v2/), index.ts in both directories.
void write_typescript(const std::string& out_dir);

// The bundle's text, to validate messages against.
std::string bundle_json();

}  // namespace llmx::schema
