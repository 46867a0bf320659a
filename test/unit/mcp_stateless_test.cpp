// MCP 2026-07-28 as plain code (protocol/rpc/mcp_stateless.hpp): the per-request `_meta`, the
// results' common fields, and the sealed requestState.
#include <doctest/doctest.h>

#include "protocol/base/json_reader.hpp"
#include "protocol/rpc/mcp_stateless.hpp"

using namespace llmx;

namespace {
std::variant<mcp::RequestMeta, rpc::RpcError> meta_of(json::Parser& p, std::string_view params) {
  return mcp::read_request_meta(p.parse(params));
}
}  // namespace

TEST_CASE("mcp stateless: the request's _meta says the version and the client's capabilities") {
  json::Parser p;
  CHECK(mcp::is_stateless_request(p.parse(R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}})")));
  CHECK_FALSE(mcp::is_stateless_request(p.parse(R"({"_meta":{"progressToken":1}})")));
  CHECK_FALSE(mcp::is_stateless_request(std::nullopt));

  auto ok = meta_of(p, R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
      "io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}})");
  REQUIRE(std::holds_alternative<mcp::RequestMeta>(ok));
  CHECK(std::get<mcp::RequestMeta>(ok).capabilities.elicitation_form);
  CHECK(std::get<mcp::RequestMeta>(ok).tasks_extension);

  auto no_caps = meta_of(p, R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}})");
  REQUIRE(std::holds_alternative<rpc::RpcError>(no_caps));
  CHECK(std::get<rpc::RpcError>(no_caps).code == -32602);

  auto old = meta_of(p, R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25",
      "io.modelcontextprotocol/clientCapabilities":{}}})");
  REQUIRE(std::holds_alternative<rpc::RpcError>(old));
  const auto& err = std::get<rpc::RpcError>(old);
  CHECK(err.code == -32022);
  REQUIRE(err.data);
  CHECK(err.data->find(R"("requested":"2025-11-25")") != std::string::npos);
  CHECK(err.data->find(R"("supported":["2026-07-28",)") != std::string::npos);
}

TEST_CASE("mcp stateless: results carry resultType and serverInfo once") {
  CHECK(mcp::stateless_result("{}").starts_with(R"({"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":)"));
  auto tagged = mcp::stateless_result(R"({"resultType":"task","taskId":"t"})");
  CHECK(tagged.find(R"("resultType":"complete")") == std::string::npos);
  CHECK(tagged.ends_with(R"(,"resultType":"task","taskId":"t"})"));
  auto asked = mcp::input_required_result({{"k", R"({"mode":"form"})"}}, "S");
  CHECK(asked.find(R"("inputRequests":{"k":{"method":"elicitation/create","params":{"mode":"form"}}},"requestState":"S")") !=
        std::string::npos);
}

TEST_CASE("mcp stateless: a requestState opens only unaltered, under the key that sealed it") {
  mcp::RequestStateSeal seal, other;
  mcp::RequestState s{"task-1", "alice", mcp::call_digest("llmx", R"({"prompt":"x"})"), 123, {"call_1", "srv/0"}};
  auto token = seal.seal(s);
  auto back = seal.open(token);
  REQUIRE(back);
  CHECK(back->task_id == "task-1");
  CHECK(back->owner == "alice");
  CHECK(back->call_digest == s.call_digest);
  CHECK(back->expires_ms == 123);
  CHECK(back->keys == std::vector<std::string>{"call_1", "srv/0"});
  CHECK_FALSE(other.open(token));  // another process's key
  for (size_t i = 0; i < token.size(); i += 7) {
    auto altered = token;
    altered[i] = altered[i] == 'A' ? 'B' : 'A';
    CAPTURE(i);
    CHECK_FALSE(seal.open(altered));
  }
  CHECK_FALSE(seal.open(""));
  CHECK_FALSE(seal.open("no-dot"));
  // The digest tells calls apart.
  CHECK(mcp::call_digest("llmx", R"({"prompt":"x"})") != mcp::call_digest("llmx", R"({"prompt":"y"})"));
  CHECK(mcp::call_digest("llmx", "null") != mcp::call_digest("llmx-reply", "null"));
}
