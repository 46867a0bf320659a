// The exported protocol: which wire types `llmx app-server generate-json-schema` and
// `generate-ts` write, under which names and in which directory (protocol.md §4.8). Adding a type
// is one line in wire_catalog.cpp:
//
//   reg.add<api::NewConversationParams>("NewConversationParams", Dir::v1);
//
// and a notification of a union is one more:
//
//   reg.notification<v2::ThreadResult>("ServerNotification", "thread/started");
//
// The client's requests are not listed here: the method tables that serve them export them.
#pragma once

#include <functional>
#include <string>

#include "protocol/base/schema_gen.hpp"

namespace llmx::schema {

// Adds the methods a server serves to a request union: the serving method table exports them
// (actors: export_client_requests), so the schema lists exactly what is served.
using RequestExport = std::function<void(Registry&, const std::string& union_name)>;

// Every exported type, and the ClientRequest union from `client_requests`.
Registry wire_catalog(const RequestExport& client_requests);

// DIR/llmx_app_server_protocol.schemas.json plus one pretty-printed schema per exported type:
// DIR/X.json (framing, core model), DIR/v1/X.json, DIR/v2/X.json.
void write_json_schema_bundle(const std::string& out_dir, const RequestExport& client_requests);

// One .ts per type (v2 types under DIR/v2/), index.ts in both directories.
void write_typescript(const std::string& out_dir, const RequestExport& client_requests);

// The bundle's text, to validate messages against.
std::string bundle_json(const RequestExport& client_requests);

}  // namespace llmx::schema
