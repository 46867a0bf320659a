#include <doctest/doctest.h>

#include <set>

#include "protocol/rpc/conversation_api.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/jsonrpc.hpp"
#include "protocol/core/ops.hpp"
#include "protocol/rpc/wire_catalog.hpp"
#include "actors/session.hpp"

using namespace llmx;

namespace schema_test {

enum class Color { red, dark_blue };

struct Inner {
  std::string name;
  LLMX_FIELDS(v("name", s.name))
};

struct Sample {
  std::string id;
  std::optional<int64_t> size;
  Nullable<std::string> note;
  Color color = Color::red;
  std::vector<Inner> inners;
  std::map<std::string, uint32_t> counts;
  bool flag = false;
  RawJson extra;
  LLMX_FIELDS(v("id", s.id); v("size", s.size); v("note", s.note); v("color", s.color);
              v("inners", s.inners); v("counts", s.counts); v("flag", s.flag, Field::defaulted);
              v("extra", s.extra))
};

LLMX_TAGGED_STRING(Circle, "circle", radius)
LLMX_TAGGED(Square, "square", int64_t side = 0; Nullable<Inner> label;
           LLMX_FIELDS(v("side", s.side); v("label", s.label)))
using Shape = OneOf<Circle, Square>;

// Two different structs that would both be exported as `Inner`.
namespace other {
struct Inner {
  int64_t n = 0;
  LLMX_FIELDS(v("n", s.n))
};
}  // namespace other

}  // namespace schema_test

template <>
struct llmx::EnumTraits<schema_test::Color> {
  static constexpr std::array<std::pair<schema_test::Color, std::string_view>, 2> values{{
      {schema_test::Color::red, "red"},
      {schema_test::Color::dark_blue, "dark-blue"},
  }};
};

namespace {

std::string compact(const std::string& text) {
  json::Parser p;
  return json::to_text(p.parse(text));
}

// A deliberately small validator: $ref, oneOf/anyOf, type, const, enum, required, properties,
// additionalProperties, items. Stricter than JSON Schema in one way: an object key that the
// schema does not declare is an error, which is what catches encoder/schema drift.
class Checker {
 public:
  explicit Checker(const std::string& bundle) : root_(parser_.parse(bundle)) {}

  std::vector<std::string> check(std::string_view ref, const std::string& value_json) {
    json::Parser vp;
    json::Element value = vp.parse(value_json);
    std::vector<std::string> errors;
    walk(resolve(ref), value, "$", &errors);
    return errors;
  }

 private:
  json::Element resolve(std::string_view ref) {
    REQUIRE(ref.starts_with("#"));
    auto r = root_.at_pointer(ref.substr(1));
    REQUIRE_MESSAGE(r.error() == simdjson::SUCCESS, "unresolved $ref " << ref);
    return r.value_unsafe();
  }

  // By value: a range-for over `get_array().value_unsafe()` would outlive its temporary.
  static simdjson::dom::array array_of(json::Element e) { return e.get_array().value_unsafe(); }

  static bool type_matches(std::string_view t, json::Element v) {
    if (t == "string") return v.is_string();
    if (t == "integer") return v.is_int64() || v.is_uint64();
    if (t == "number") return v.is_number();
    if (t == "boolean") return v.is_bool();
    if (t == "null") return v.is_null();
    if (t == "array") return v.is_array();
    if (t == "object") return v.is_object();
    return false;
  }

  bool walk(json::Element s, json::Element v, const std::string& path, std::vector<std::string>* errs) {
    bool ok = true;
    auto fail = [&](const std::string& msg) {
      if (errs) errs->push_back(path + ": " + msg);
      ok = false;
    };
    json::Object so = s.get_object().value_unsafe();
    if (auto r = json::get_string(so, "$ref")) return walk(resolve(*r), v, path, errs);
    if (auto alts = json::get(so, "oneOf")) {
      int matches = 0;
      for (auto a : array_of(*alts)) matches += walk(a, v, path, nullptr) ? 1 : 0;
      if (matches != 1) fail(fmt::format("matches {} oneOf alternatives: {}", matches, json::to_text(v)));
    }
    if (auto alts = json::get(so, "anyOf")) {
      bool any = false;
      for (auto a : array_of(*alts)) any = any || walk(a, v, path, nullptr);
      if (!any) fail("matches no anyOf alternative: " + json::to_text(v));
    }
    if (auto t = json::get(so, "type")) {
      bool match = false;
      if (t->is_string()) {
        match = type_matches(t->get_string().value_unsafe(), v);
      } else {
        for (auto one : array_of(*t)) match = match || type_matches(one.get_string().value_unsafe(), v);
      }
      if (!match) return fail("wrong type: " + json::to_text(v) + " for " + json::to_text(*t)), false;
    }
    if (auto c = json::get(so, "const"))
      if (json::to_text(*c) != json::to_text(v)) fail("expected " + json::to_text(*c));
    if (auto e = json::get(so, "enum")) {
      bool found = false;
      for (auto one : array_of(*e)) found = found || json::to_text(one) == json::to_text(v);
      if (!found) fail("not in enum: " + json::to_text(v));
    }
    if (v.is_object()) {
      json::Object vo = v.get_object().value_unsafe();
      auto props = json::get(so, "properties");
      auto extra = json::get(so, "additionalProperties");
      for (auto [k, val] : vo) {
        std::string sub = path + "." + std::string(k);
        std::optional<json::Element> ps;
        if (props) ps = json::get(props->get_object().value_unsafe(), k);
        if (ps)
          ok = walk(*ps, val, sub, errs) && ok;
        else if (extra)
          ok = walk(*extra, val, sub, errs) && ok;
        else if (props)
          fail("undeclared property `" + std::string(k) + "`");
      }
      if (auto req = json::get(so, "required"))
        for (auto r : array_of(*req))
          if (vo.at_key(r.get_string().value_unsafe()).error() != simdjson::SUCCESS)
            fail("missing required `" + std::string(r.get_string().value_unsafe()) + "`");
    }
    if (v.is_array())
      if (auto items = json::get(so, "items")) {
        size_t i = 0;
        for (auto item : array_of(v)) ok = walk(*items, item, path + "." + std::to_string(i++), errs) && ok;
      }
    return ok;
  }

  json::Parser parser_;
  json::Element root_;
};

Checker& catalog_checker() {
  static Checker c(schema::bundle_json(llmx::export_client_requests));
  return c;
}

#define CHECK_CONFORMS(ref, value_json)                                  \
  do {                                                                  \
    auto errors_ = catalog_checker().check(ref, value_json);            \
    for (const auto& e_ : errors_) FAIL_CHECK(ref << " " << e_);        \
  } while (0)

template <class Union, class F>
void for_each_alternative(F&& f) {
  [&]<size_t... Is>(std::index_sequence<Is...>) {
    (f(Union{std::variant_alternative_t<Is, decltype(Union::value)>{}}), ...);
  }(std::make_index_sequence<std::variant_size_v<decltype(Union::value)>>{});
}

}  // namespace

TEST_CASE("schema: a reflected struct gives required, optional, nullable, enum, vector, map and nested") {
  CHECK(compact(schema::json_schema_of<schema_test::Sample>()) ==
        R"({"$schema":"http://json-schema.org/draft-07/schema#","title":"Sample","type":"object",)"
        R"("required":["id","color","inners","counts"],"properties":{"id":{"type":"string"},)"
        R"("size":{"type":"integer","format":"int64"},"note":{"type":["string","null"]},)"
        R"("color":{"$ref":"#/definitions/Color"},"inners":{"type":"array","items":{"$ref":"#/definitions/Inner"}},)"
        R"("counts":{"type":"object","additionalProperties":{"type":"integer","format":"uint32","minimum":0}},)"
        R"("flag":{"type":"boolean"},"extra":{}},"definitions":{"Color":{"type":"string","enum":["red","dark-blue"]},)"
        R"("Inner":{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}}})");
  CHECK(schema::typescript_of<schema_test::Sample>() ==
        "export type Sample = { id: string, size?: number, note: string | null, color: Color, "
        "inners: Array<Inner>, counts: { [key in string]?: number }, flag: boolean, extra: unknown, };");
}

TEST_CASE("schema: internally tagged unions carry the tag as a const and synthesized titles") {
  CHECK(compact(schema::json_schema_of<schema_test::Shape>("Shape")) ==
        R"({"$schema":"http://json-schema.org/draft-07/schema#","title":"Shape","oneOf":[)"
        R"({"title":"CircleShape","type":"object","required":["type","radius"],"properties":{"type":{"type":"string","const":"circle"},"radius":{"type":"string"}}},)"
        R"({"title":"SquareShape","type":"object","required":["type","side"],"properties":{"type":{"type":"string","const":"square"},"side":{"type":"integer","format":"int64"},)"
        R"("label":{"anyOf":[{"$ref":"#/definitions/Inner"},{"type":"null"}]}}}],)"
        R"("definitions":{"Inner":{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}}})");
  CHECK(schema::typescript_of<schema_test::Shape>("Shape") ==
        R"(export type Shape = { type: "circle", radius: string, } | { type: "square", side: number, label: Inner | null, };)");
}

TEST_CASE("schema: externally tagged unions have one required key per variant") {
  std::string s = compact(schema::json_schema_of<FileChange>("FileChange"));
  CHECK(s.find(R"({"title":"AddFileChange","type":"object","required":["add"],"properties":{"add":{"type":"object","required":["content"],"properties":{"content":{"type":"string"}}}}})") != std::string::npos);
  CHECK(s.find(R"("title":"UpdateFileChange")") != std::string::npos);
  CHECK(s.find(R"("move_path":{"type":["string","null"]})") != std::string::npos);
}

TEST_CASE("schema: names clash and dangling refs are errors") {
  schema::Registry clash;
  clash.add<schema_test::Inner>("Inner", schema::Dir::root);
  clash.add<schema_test::other::Inner>("Inner", schema::Dir::v1);
  CHECK_THROWS_AS(schema::generate(clash), std::logic_error);

  // The same name in v2 is a different definition.
  schema::Registry split;
  split.add<schema_test::Inner>("Inner", schema::Dir::root);
  split.add<schema_test::other::Inner>("Inner", schema::Dir::v2);
  CHECK_NOTHROW(schema::generate(split));

  schema::Registry dangling;
  dangling.request<schema_test::Inner>("ClientRequest", "x/y");  // no RequestId registered
  CHECK_THROWS_AS(schema::generate(dangling), std::logic_error);
}

TEST_CASE("schema: every exported file of the catalog is valid JSON with its title") {
  auto files = schema::json_schema_files(schema::wire_catalog(llmx::export_client_requests));
  std::set<std::string> paths;
  json::Parser p;
  for (const auto& f : files) {
    paths.insert(f.path);
    json::Element e;
    REQUIRE_NOTHROW_MESSAGE(e = p.parse(f.content), f.path);
    auto o = e.get_object().value_unsafe();
    CHECK(json::get_string(o, "$schema") == "http://json-schema.org/draft-07/schema#");
    if (f.path == schema::kBundleFile) continue;
    std::string name = f.path.substr(f.path.rfind('/') + 1);
    CHECK(json::get_string(o, "title") == name.substr(0, name.size() - 5));
  }
  for (const char* want : {"RequestId.json", "JSONRPCMessage.json", "JSONRPCRequest.json", "JSONRPCNotification.json",
                           "JSONRPCResponse.json", "JSONRPCError.json", "JSONRPCErrorError.json", "ClientRequest.json",
                           "ServerRequest.json", "ClientNotification.json", "ServerNotification.json", "EventMsg.json",
                           "FileChange.json", "v1/InputItem.json", "ParsedCommand.json", "SandboxPolicy.json",
                           "v1/NewConversationParams.json", "v2/ModelListParams.json",
                           "llmx_app_server_protocol.schemas.json"})
    CHECK_MESSAGE(paths.count(want) == 1, want);

  auto bundle = p.parse(schema::bundle_json(llmx::export_client_requests)).get_object().value_unsafe();
  CHECK(json::get_string(bundle, "title") == "LlmxAppServerProtocol");
  auto defs = json::get(bundle, "definitions")->get_object().value_unsafe();
  CHECK(json::get(defs, "TaskCompleteEvent") == std::nullopt);  // a variant, not a definition
  CHECK(json::get(defs, "ConversationSummary").has_value());
  CHECK(json::get(json::get(defs, "v2")->get_object().value_unsafe(), "ModelListParams").has_value());
  std::string text = schema::bundle_json(llmx::export_client_requests);
  CHECK(text.find(R"("title": "TaskCompleteEventMsg")") != std::string::npos);
  CHECK(text.find(R"("title": "NewConversationRequest")") != std::string::npos);
}

TEST_CASE("schema: TypeScript files have the header, imports and index re-exports") {
  auto files = schema::typescript_files(schema::wire_catalog(llmx::export_client_requests));
  std::map<std::string, std::string> by_path;
  for (const auto& f : files) {
    CHECK_MESSAGE(f.content.starts_with("// GENERATED CODE! DO NOT MODIFY BY HAND!\n\n"), f.path);
    by_path[f.path] = f.content;
  }
  CHECK(by_path["Event.ts"] ==
        "// GENERATED CODE! DO NOT MODIFY BY HAND!\n\nimport type { EventMsg } from \"./EventMsg\";\n\n"
        "export type Event = { id: string, msg: EventMsg, };\n");
  CHECK(by_path["SandboxPolicy.ts"].find(R"({ mode: "read-only", } | { mode: "workspace-write", writable_roots: Array<string>, network_access: boolean,)") !=
        std::string::npos);
  CHECK(by_path["InputItem.ts"].find(R"({ type: "localImage", data: { path: string, }, })") != std::string::npos);
  CHECK(by_path["LlmxToolCallParam.ts"].find(R"("approval-policy"?: AskForApproval)") != std::string::npos);
  CHECK(by_path["index.ts"].find("export type { ConversationSummary } from \"./ConversationSummary\";\n") != std::string::npos);
  CHECK(by_path["index.ts"].ends_with("export * as v2 from \"./v2\";\n"));
  CHECK(by_path["v2/index.ts"].find("export type { ModelListParams } from \"./ModelListParams\";\n") != std::string::npos);
}

TEST_CASE("schema: the drift checker itself rejects undeclared, missing and mistyped fields") {
  CHECK(catalog_checker().check("#/definitions/ConversationIdParams", R"({"conversationId":"c"})").empty());
  CHECK(catalog_checker().check("#/definitions/ConversationIdParams", R"({"conversationId":"c","extra":1})").size() == 1);
  CHECK(catalog_checker().check("#/definitions/ConversationIdParams", R"({})").size() == 1);
  CHECK(catalog_checker().check("#/definitions/ConversationIdParams", R"({"conversationId":3})").size() == 1);
  CHECK(catalog_checker().check("#/definitions/EventMsg", R"({"type":"nope"})").size() == 1);
}

TEST_CASE("schema: what the encoder writes is what the schema declares") {
  api::ConversationSummary summary;
  summary.conversationId = "c1";
  summary.path = "/r.jsonl";
  summary.gitInfo = api::GitInfoWire{std::string("abc"), std::nullopt, std::string("git@x")};
  CHECK_CONFORMS("#/definitions/ConversationSummary", json::to_json(summary));
  CHECK_CONFORMS("#/definitions/ListConversationsResponse", json::to_json(api::ListConversationsResult{{summary}, std::nullopt}));

  // Every EventMsg variant as default-constructed, then some with their optional parts filled.
  for_each_alternative<EventMsg>([](const EventMsg& m) { CHECK_CONFORMS("#/definitions/Event", json::to_json(Event{"1", m})); });
  for_each_alternative<ResponseItem>([](const ResponseItem& item) {
    CHECK_CONFORMS("#/definitions/EventMsg", json::to_json(EventMsg{RawResponseItemEvent{item}}));
  });
  for_each_alternative<TurnItem>([](const TurnItem& item) {
    CHECK_CONFORMS("#/definitions/EventMsg", json::to_json(EventMsg{ItemStartedEvent{"t", "1", item}}));
  });
  TokenCountEvent tc;
  tc.info = TokenUsageInfo{};
  tc.rate_limits = RateLimitSnapshot{RateLimitWindow{25.5, 300, 1730947200}, std::nullopt};
  SessionConfiguredEvent sc{"s", "m", "medium", 1, 2, JsonOf<RecordedEvents>{"[]"}, "/r", "no sandbox"};
  ExecCommandBeginEvent begin{"c", {"ls"}, "/", {ParsedRead{"cat a", "a", "a"}, ParsedListFiles{"ls", "/"},
                                                 ParsedSearch{"rg x", "x", std::nullopt}, ParsedUnknown{"x"}}};
  ExecApprovalRequestEvent approval{"c", {"rm"}, "/", "why", SandboxCommandAssessment{"d", RiskLevel::low}, {}};
  ApplyPatchApprovalRequestEvent patch{"c", {{"/a", FileAdd{"x"}}, {"/b", FileUpdate{"d", "/c"}}, {"/d", FileDelete{"y"}}},
                                       "why", "/"};
  ReasoningItem reasoning;
  reasoning.summary = {SummaryText{"s"}};
  reasoning.content = std::vector<ReasoningContent>{ReasoningText{"r"}};
  for (const EventMsg& m : {EventMsg{tc}, EventMsg{sc}, EventMsg{begin}, EventMsg{approval}, EventMsg{patch},
                            EventMsg{ExecCommandOutputDeltaEvent{"c", "stdout", Base64Bytes{"hi"}}},
                            EventMsg{PlanUpdateEvent{"e", {PlanItem{"s", StepStatus::pending}}}},
                            EventMsg{RawResponseItemEvent{reasoning}},
                            EventMsg{RawResponseItemEvent{user_message("hi")}},
                            EventMsg{ItemCompletedEvent{"t", "1", AgentMessageTurnItem{"m", {AgentText{"x"}}}}},
                            EventMsg{DeprecationNoticeEvent{"s", "d"}}})
    CHECK_CONFORMS("#/definitions/EventMsg", json::to_json(m));

  SandboxPolicy ws;
  ws.mode = SandboxMode::workspace_write;
  ws.writable_roots = {"/w"};
  for (const SandboxPolicy& p : {SandboxPolicy{}, ws, SandboxPolicy{SandboxMode::danger_full_access}})
    CHECK_CONFORMS("#/definitions/SandboxPolicy", json::to_json(p));

  for_each_alternative<Op>([](const Op& op) { CHECK_CONFORMS("#/definitions/Submission", json::to_json(Submission{"1", op})); });
  UserTurnOp turn;
  turn.items = {TextInput{"a"}, ImageInput{"b"}, LocalImageInput{"c"}};
  turn.sandbox_policy = ws;
  turn.effort = "high";
  CHECK_CONFORMS("#/definitions/Op", json::to_json(Op{turn}));

  // v1 requests in their envelope, as the server's encoder writes them.
  rpc::Encoder enc{false};
  api::SendUserTurnParams sut;
  sut.conversationId = "c";
  sut.items = {api::InputItem{TextInput{"a"}}, api::InputItem{ImageInput{"b"}}, api::InputItem{LocalImageInput{"c"}}};
  sut.sandboxPolicy = ws;
  CHECK_CONFORMS("#/definitions/ClientRequest", enc.request(rpc::Id::from_int(1), "sendUserTurn", json::to_json(sut)));
  api::NewConversationParams ncp;
  ncp.model = "m";
  ncp.approvalPolicy = AskForApproval::never;
  ncp.config = RawJson{R"({"a.b":1})"};
  CHECK_CONFORMS("#/definitions/ClientRequest", enc.request(rpc::Id{"\"s\""}, "newConversation", json::to_json(ncp)));
  api::ExecCommandApprovalParams ecp;
  ecp.command = {"ls"};
  CHECK_CONFORMS("#/definitions/ServerRequest", enc.request(rpc::Id::from_int(0), "execCommandApproval", json::to_json(ecp)));
  CHECK_CONFORMS("#/definitions/JSONRPCMessage", enc.result(rpc::Id::from_int(3), "{}"));
  CHECK_CONFORMS("#/definitions/JSONRPCMessage", enc.error(rpc::Id::from_int(3), rpc::kInvalidRequest, "bad"));
  CHECK_CONFORMS("#/definitions/ServerNotification",
                 enc.notification("sessionConfigured", json::to_json(api::SessionConfiguredNotification{})));
}
