// The typed method table (protocol/rpc/method_table.hpp) and the promise it makes to the schema
// export: every method a server serves is exported, every exported method is served.
#include "protocol/rpc/method_table.hpp"

#include <doctest/doctest.h>

#include <regex>
#include <set>

#include "actors/session.hpp"
#include "protocol/rpc/wire_catalog.hpp"

using namespace llmx;
using namespace llmx::rpc;

namespace {

struct EchoParams {
  std::string text;
  int64_t times = 1;
  LLMX_FIELDS(v("text", s.text); v("times", s.times))
};
struct EchoResult {
  std::string echoed;
  LLMX_FIELDS(v("echoed", s.echoed))
};

// What a session would write.
struct Sink {
  std::vector<std::string> lines;
  ResponderPtr responder() {
    auto r = std::make_shared<Responder>();
    r->result = [this](const Id& id, std::string json, Lane lane) {
      lines.push_back(std::string(lane == Lane::ahead ? "ahead " : "") + "result " + id.json + " " + json);
    };
    r->error = [this](const Id& id, const RpcError& e, Lane lane) {
      lines.push_back(std::string(lane == Lane::ahead ? "ahead " : "") + "error " + id.json + " " +
                      std::to_string(e.code) + " " + e.message);
    };
    return r;
  }
};

struct Ctx {
  std::vector<Reply<EchoResult>>* parked = nullptr;
  int* notified = nullptr;
};

void echo(Ctx, EchoParams p, Reply<EchoResult> reply) {
  if (p.times < 0) return reply(RpcError{kInvalidRequest, "times must not be negative"});
  std::string out;
  for (int64_t i = 0; i < p.times; ++i) out += p.text;
  reply(EchoResult{out});
}
void park(Ctx ctx, NoParams, Reply<EchoResult> reply) { ctx.parked->push_back(reply); }
void note(Ctx ctx, EchoParams p) { *ctx.notified += static_cast<int>(p.times); }

Incoming request(json::Parser& parser, std::string_view line) { return classify(parser.parse(line)); }

}  // namespace

TEST_CASE("method table: typed params in, typed result or RpcError out, unknown methods left to the caller") {
  MethodTable<Ctx> t;
  t.bind<EchoParams, EchoResult>("echo", echo).bind<NoParams, EchoResult>("park", park).on<EchoParams>("note", note);
  Sink sink;
  auto out = sink.responder();
  json::Parser parser;
  std::vector<Reply<EchoResult>> parked;
  int notified = 0;
  Ctx ctx{&parked, &notified};

  CHECK(t.call(ctx, request(parser, R"({"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"ab","times":2}})"), out));
  CHECK(t.call(ctx, request(parser, R"({"jsonrpc":"2.0","id":"x","method":"echo","params":{"text":"a","times":-1}})"), out));
  // A decode error names the field and never reaches the handler.
  CHECK(t.call(ctx, request(parser, R"({"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":5}})"), out));
  CHECK(t.call(ctx, request(parser, R"({"jsonrpc":"2.0","id":4,"method":"park","params":[1]})"), out));
  CHECK(t.call(ctx, request(parser, R"({"jsonrpc":"2.0","id":5,"method":"park"})"), out));
  CHECK_FALSE(t.call(ctx, request(parser, R"({"jsonrpc":"2.0","id":6,"method":"nope"})"), out));
  REQUIRE(sink.lines.size() == 4);
  CHECK(sink.lines[0] == R"(result 1 {"echoed":"abab"})");
  CHECK(sink.lines[1] == R"(error "x" -32600 times must not be negative)");
  // Refused before the handler ran: the error depends on nothing queued, so it goes ahead.
  CHECK(sink.lines[2].starts_with("ahead error 3 -32602 Invalid params: "));
  CHECK(sink.lines[2].find("text") != std::string::npos);
  CHECK(sink.lines[3] == "ahead error 4 -32602 Invalid params: `park` takes no params, got array");

  // A kept reply answers later, with its own id.
  REQUIRE(parked.size() == 1);
  CHECK(parked[0].id().json == "5");
  parked[0](EchoResult{"late"});
  CHECK(sink.lines.back() == R"(result 5 {"echoed":"late"})");

  CHECK(t.notify(ctx, request(parser, R"({"jsonrpc":"2.0","method":"note","params":{"text":"","times":3}})")));
  CHECK(t.notify(ctx, request(parser, R"({"jsonrpc":"2.0","method":"note","params":{"times":"bad"}})")));  // dropped
  CHECK_FALSE(t.notify(ctx, request(parser, R"({"jsonrpc":"2.0","method":"other"})")));
  CHECK(notified == 3);
  CHECK(t.methods(false) == std::vector<std::string>{"echo", "park"});
}

TEST_CASE("method table: a method marked ahead answers in the ahead lane, kept replies and errors too") {
  MethodTable<Ctx> t;
  t.bind<EchoParams, EchoResult>("echo", echo).bind<NoParams, EchoResult>("park", park).ahead("echo").ahead("park");
  t.ahead("unbound");  // nothing to mark: ignored
  Sink sink;
  auto out = sink.responder();
  json::Parser parser;
  std::vector<Reply<EchoResult>> parked;
  Ctx ctx{&parked, nullptr};
  CHECK(t.call(ctx, request(parser, R"({"id":1,"method":"echo","params":{"text":"a","times":1}})"), out));
  CHECK(t.call(ctx, request(parser, R"({"id":2,"method":"echo","params":{"text":"a","times":-1}})"), out));
  CHECK(t.call(ctx, request(parser, R"({"id":3,"method":"park"})"), out));
  REQUIRE(parked.size() == 1);
  parked[0](EchoResult{"late"});
  REQUIRE(sink.lines.size() == 3);
  CHECK(sink.lines[0] == R"(ahead result 1 {"echoed":"a"})");
  CHECK(sink.lines[1] == "ahead error 2 -32600 times must not be negative");
  CHECK(sink.lines[2] == R"(ahead result 3 {"echoed":"late"})");
  MethodTable<Ctx> plain;
  plain.bind<EchoParams, EchoResult>("echo", echo);
  CHECK(plain.call(ctx, request(parser, R"({"id":4,"method":"echo","params":{"text":"b","times":1}})"), out));
  CHECK(sink.lines.back() == R"(result 4 {"echoed":"b"})");
}

TEST_CASE("method table: methods bound as external are served but not exported") {
  MethodTable<Ctx> t;
  t.bind<EchoParams, EchoResult>("echo", echo).bind<NoParams, EchoResult>("park", park, Export::no);
  CHECK(t.serves("park"));
  CHECK(t.methods(true) == std::vector<std::string>{"echo"});
  schema::Registry reg;
  reg.add_node("RequestId", schema::Dir::root, schema::string());
  t.export_requests(reg, "ClientRequest");
  auto files = schema::json_schema_files(reg);
  bool found = false;
  for (const auto& f : files)
    if (f.path == "ClientRequest.json") {
      found = true;
      CHECK(f.content.find("\"echo\"") != std::string::npos);
      CHECK(f.content.find("\"park\"") == std::string::npos);
    }
  CHECK(found);
}

namespace {

// The `method` names of the exported ClientRequest union (its own schema file).
std::set<std::string> exported_client_requests() {
  std::set<std::string> names;
  for (const auto& f : schema::json_schema_files(schema::wire_catalog(llmx::export_client_requests))) {
    if (f.path != "ClientRequest.json") continue;
    static const std::regex method(R"re("method":\s*\{\s*"type":\s*"string",\s*"const":\s*"([^"]+)")re");
    for (std::sregex_iterator it(f.content.begin(), f.content.end(), method), end; it != end; ++it)
      names.insert((*it)[1].str());
  }
  return names;
}

}  // namespace

TEST_CASE("method table: every method the app server serves is exported, and every exported method is served") {
  auto exported = exported_client_requests();
  auto served = served_methods(Server::app, true);
  REQUIRE(served.size() > 30);
  CHECK(std::set<std::string>(served.begin(), served.end()).size() == served.size());  // bound once each
  for (const auto& m : served) CHECK_MESSAGE(exported.count(m) == 1, "served, not exported: " << m);
  for (const auto& m : exported)
    CHECK_MESSAGE(std::find(served.begin(), served.end(), m) != served.end(), "exported, not served: " << m);
  // The app server has no MCP methods of its own; the MCP server's app-protocol methods are the
  // shared ones, all exported too.
  CHECK(served_methods(Server::app, false).size() == served.size());
  for (const auto& m : served_methods(Server::mcp, true))
    CHECK_MESSAGE(exported.count(m) == 1, "the MCP server serves an unexported method: " << m);
  for (const char* m : {"tools/call", "tools/list", "initialize", "ping"}) {
    auto all = served_methods(Server::mcp, false);
    CHECK(std::find(all.begin(), all.end(), m) != all.end());
  }
}
