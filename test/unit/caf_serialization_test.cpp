// Unit tests for the CAF serialization derived from each struct's field list
// (protocol/base/caf_inspect.hpp): values survive caf::binary_serializer / binary_deserializer, both
// directly and inside a caf::message of an actor system with llmx's message types registered.
// Equality is checked through the JSON encoding before and after.
#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "actors/message_list.hpp"
#include "protocol/base/json_codec.hpp"

using namespace llmx;

namespace {

template <class T>
std::vector<char> serialize(const T& x) {
  std::vector<char> buf;
  caf::binary_serializer sink(nullptr, buf);
  auto err = sink(const_cast<T&>(x));
  REQUIRE_MESSAGE(!err, caf::to_string(err));
  return buf;
}

template <class T>
T deserialize(const std::vector<char>& buf) {
  T y{};
  caf::binary_deserializer source(nullptr, buf);
  auto err = source(y);
  REQUIRE_MESSAGE(!err, caf::to_string(err));
  CHECK(source.remaining() == 0);
  return y;
}

template <class T>
void check_roundtrip(const T& x) {
  auto before = json::to_json(x);
  auto after = json::to_json(deserialize<T>(serialize(x)));
  CHECK(after == before);
}

std::map<std::string, FileChange> changes() {
  return {
      {"/p/new.txt", FileAdd{"hello\n"}},
      {"/p/old.txt", FileDelete{"bye\n"}},
      {"/p/moved.txt", FileUpdate{"@@ -1 +1 @@\n-a\n+b\n", std::string("/p/renamed.txt")}},
      {"/p/edit.txt", FileUpdate{"@@ -1 +1 @@\n-x\n+y\n", std::nullopt}},
  };
}

std::vector<Event> sample_events() {
  std::vector<Event> evs;
  evs.push_back({"1", AgentMessageDeltaEvent{"Hi \"there\"\n"}});
  evs.push_back({"1", ErrorEvent{"boom"}});  // first variant of EventMsg
  evs.push_back({"2", DeprecationNoticeEvent{"old", std::nullopt}});  // last variant
  evs.push_back({"2", DeprecationNoticeEvent{"old", std::string("details")}});
  evs.push_back({"3", ShutdownCompleteEvent{}});
  evs.push_back({"4", TaskCompleteEvent{}});
  evs.push_back({"4", TaskCompleteEvent{std::string("done")}});
  evs.push_back({"5", ExecCommandBeginEvent{"c1",
                                            {"bash", "-lc", "ls -la"},
                                            "/p",
                                            {ParsedRead{"cat a", "a", "/p/a"}, ParsedListFiles{"ls", std::nullopt},
                                             ParsedListFiles{"ls src", std::string("src")},
                                             ParsedSearch{"rg x", std::string("x"), std::nullopt},
                                             ParsedUnknown{"make"}},
                                            true}});
  std::string binary("\x00\x01\xff\xfe\n\r\"\\", 8);
  evs.push_back({"5", ExecCommandOutputDeltaEvent{"c1", "stdout", Base64Bytes{binary}}});
  evs.push_back({"5", ExecCommandEndEvent{"c1", "out", "err", "outerr", -9, Duration{3, 999999999}, "fmt"}});
  evs.push_back({"6", ApplyPatchApprovalRequestEvent{"p1", changes(), std::string("why"), std::nullopt}});
  evs.push_back({"6", PatchApplyBeginEvent{"p1", true, changes()}});
  evs.push_back({"6", PatchApplyBeginEvent{"p2", false, {}}});
  evs.push_back({"7", ExecApprovalRequestEvent{"c2",
                                               {"rm", "-rf", "x"},
                                               "/p",
                                               std::nullopt,
                                               SandboxCommandAssessment{"deletes x", RiskLevel::high},
                                               {}}});
  TokenCountEvent tc;
  tc.info = TokenUsageInfo{{10, 2, 3, 1, 13}, {5, 1, 2, 0, 7}, 128000};
  tc.rate_limits = RateLimitSnapshot{RateLimitWindow{42.5, 60, std::nullopt}, std::nullopt};
  evs.push_back({"8", tc});
  evs.push_back({"8", TokenCountEvent{}});
  SessionConfiguredEvent sc{"sess", "m", std::string("high"), UINT64_MAX, 7, JsonOf<RecordedEvents>{R"([{"type":"x"}])"}, "/r"};
  evs.push_back({"", sc});
  evs.push_back({"", SessionConfiguredEvent{"s2", "m", std::nullopt, 0, 0, std::nullopt, ""}});
  evs.push_back({"9", ItemStartedEvent{"th", "tu",
                                       UserMessageTurnItem{"u1",
                                                           {TextInput{"look"}, ImageInput{"data:image/png;base64,AA=="},
                                                            LocalImageInput{"/tmp/a.png"}}}}});
  evs.push_back({"9", ItemCompletedEvent{"th", "tu", AgentMessageTurnItem{"a1", {AgentText{"x"}, AgentText{"y"}}}}});
  evs.push_back({"9", ItemCompletedEvent{"th", "tu", ReasoningTurnItem{"r1", {"s"}, {"raw1", "raw2"}}}});
  evs.push_back({"9", RawResponseItemEvent{ReasoningItem{{SummaryText{"sum"}},
                                                         std::vector<ReasoningContent>{ReasoningText{"t"}},
                                                         std::string("enc")}}});
  evs.push_back({"9", RawResponseItemEvent{ReasoningItem{{}, std::nullopt, std::nullopt}}});
  evs.push_back({"9", PlanUpdateEvent{std::nullopt, {{"step 1", StepStatus::completed}, {"step 2", StepStatus::in_progress}}}});
  evs.push_back({"9", PlanUpdateEvent{std::string("why"), {}}});
  evs.push_back({"9", UserMessageEvent{"hi", {"img1", "img2"}}});
  evs.push_back({"9", TaskStartedEvent{std::nullopt}});
  evs.push_back({"9", TaskStartedEvent{272000}});
  SharedString thread("0199a6c4-1f7e-7c3a-9b1e-5d2f8e4a6b0c");  // shared ids travel as strings
  evs.push_back({"9", AgentMessageContentDeltaEvent{thread, "tu", "0199a6c4-2b7e-7c3a-9b1e-5d2f8e4a6b0c", "Hel"}});
  evs.push_back({"9", ReasoningContentDeltaEvent{thread, "tu", {}, "hm"}});
  return evs;
}

}  // namespace

TEST_CASE("caf: every sample event survives a binary round trip") {
  auto evs = sample_events();
  for (const auto& ev : evs) {
    CAPTURE(json::to_json(ev));
    check_roundtrip(ev);
  }
}

TEST_CASE("caf: the decoded value is really the same variant with the same data") {
  Event ev{"5", ApplyPatchApprovalRequestEvent{"p1", changes(), std::string("why"), std::nullopt}};
  auto back = deserialize<Event>(serialize(ev));
  CHECK(back.id == "5");
  auto* req = back.msg.get_if<ApplyPatchApprovalRequestEvent>();
  REQUIRE(req);
  REQUIRE(req->changes.size() == 4);
  CHECK(req->changes.at("/p/new.txt").get_if<FileAdd>()->content == "hello\n");
  CHECK(req->changes.at("/p/old.txt").get_if<FileDelete>()->content == "bye\n");
  auto* moved = req->changes.at("/p/moved.txt").get_if<FileUpdate>();
  REQUIRE(moved);
  REQUIRE(moved->move_path.has_value());
  CHECK(*moved->move_path == "/p/renamed.txt");
  CHECK_FALSE(req->changes.at("/p/edit.txt").get_if<FileUpdate>()->move_path.has_value());
  CHECK(req->reason == std::optional<std::string>("why"));
  CHECK_FALSE(req->grant_root.has_value());

  std::string binary("\x00\x01\xff\xfe", 4);
  auto chunk = deserialize<Event>(serialize(Event{"x", ExecCommandOutputDeltaEvent{"c", "stderr", Base64Bytes{binary}}}));
  auto* d = chunk.msg.get_if<ExecCommandOutputDeltaEvent>();
  REQUIRE(d);
  CHECK(d->chunk.bytes == binary);
  CHECK(d->stream == "stderr");
}

TEST_CASE("caf: different events serialize differently (the test can tell them apart)") {
  auto evs = sample_events();
  for (size_t i = 0; i + 1 < evs.size(); ++i) {
    CAPTURE(i);
    CHECK(serialize(evs[i]) != serialize(evs[i + 1]));
  }
}

TEST_CASE("caf: a truncated buffer is an error, not a crash") {
  Event ev{"6", PatchApplyBeginEvent{"p1", true, changes()}};
  auto buf = serialize(ev);
  for (size_t cut : {size_t(0), size_t(1), buf.size() / 2, buf.size() - 1}) {
    CAPTURE(cut);
    std::vector<char> part(buf.begin(), buf.begin() + cut);
    Event y;
    caf::binary_deserializer source(nullptr, part);
    CHECK(source(y));  // an error
  }
}

TEST_CASE("caf: an out-of-range union index is an error") {
  // An Event whose EventMsg alternative index does not exist, followed by bytes that would
  // decode as the first alternative (ErrorEvent: one string): the decoder must not silently
  // pick some other alternative.
  std::vector<char> buf;
  {
    caf::binary_serializer sink(nullptr, buf);
    std::string id = "1";
    uint32_t index = 999;
    std::string message = "x";
    REQUIRE_FALSE(sink(id, index, message));
  }
  Event y;
  caf::binary_deserializer source(nullptr, buf);
  CHECK(source(y));
}

TEST_CASE("caf: TaskSpec round trip") {
  TaskSpec spec;
  spec.conversation_id = "conv-1";
  spec.sub_id = "3";
  spec.config.llmx_home = "/home/u/.llmx";
  spec.config.model = "anthropic/claude-sonnet-4-20250514";
  spec.config.provider = builtin_providers().at("litellm");
  spec.config.provider.max_tokens = 8192;
  spec.config.provider.prompt_cache = false;
  spec.config.provider.query_params = {{"api-version", "1"}};
  spec.config.provider.http_headers = {{"X-A", "a"}, {"X-B", "b"}};
  spec.config.approval_policy = AskForApproval::never;
  spec.config.sandbox_policy.mode = SandboxMode::workspace_write;
  spec.config.sandbox_policy.writable_roots = {"/a", "/b"};
  spec.config.sandbox_policy.network_access = true;
  spec.config.sandbox_policy.exclude_slash_tmp = true;
  spec.config.cwd = "/p";
  spec.config.developer_instructions = "be brief";
  spec.config.model_context_window = 200000;
  spec.config.approval_timeout_ms = 1234;
  spec.config.session_source = "mcp";
  spec.history = {
      developer_message("dev"),
      user_message("hello"),
      MessageItem{"user", {InputText{"see"}, InputImage{"data:image/png;base64,AA=="}}},
      ReasoningItem{{SummaryText{"s"}}, std::vector<ReasoningContent>{ReasoningText{"r"}}, std::nullopt},
      assistant_message("hi"),
      FunctionCallItem{"shell", R"({"command":["ls"]})", "call_1"},
      FunctionCallOutputItem{"call_1", "a\nb\n"},
  };
  spec.input = {TextInput{"next"}, ImageInput{"u"}, LocalImageInput{"/x.png"}};
  auto back = deserialize<TaskSpec>(serialize(spec));
  CHECK(json::to_json(back) == json::to_json(spec));
  CHECK(back.config.approval_policy == AskForApproval::never);
  CHECK(back.config.provider.wire_api == WireApi::chat);
  CHECK(back.config.provider.prompt_cache == std::optional<bool>(false));
  CHECK(back.history.size() == 7);
}

TEST_CASE("caf: ModelEvents round trip with every ModelEvent variant") {
  ModelEvents batch;
  batch.seq = 42;
  batch.attempt = 3;
  batch.events = {
      TextDelta{"he"},
      ReasoningDelta{"thinking"},
      ItemDone{assistant_message("hello")},
      ItemDone{FunctionCallItem{"shell", "{}", "call_0"}},
      ItemDone{ReasoningItem{{}, std::vector<ReasoningContent>{ReasoningText{"t"}}, std::nullopt}},
      Completed{std::nullopt, ""},
      Completed{TokenUsage{1, 2, 3, 4, 5}, "tool_calls"},
      RateLimits{RateLimitSnapshot{RateLimitWindow{1.5, std::nullopt, 1700000000}, RateLimitWindow{99.9, 10080, 7}}},
  };
  auto back = deserialize<ModelEvents>(serialize(batch));
  CHECK(back.seq == 42);
  CHECK(back.attempt == 3);
  REQUIRE(back.events.size() == batch.events.size());
  for (size_t i = 0; i < batch.events.size(); ++i) {
    CAPTURE(i);
    CHECK(back.events[i].kind() == batch.events[i].kind());
  }
  CHECK(json::to_json(back) == json::to_json(batch));
}

namespace {

// A message through the registered system's serializer and back; `bytes` gets what it wrote.
caf::message message_roundtrip(caf::actor_system& sys, const caf::message& msg, std::vector<char>* bytes = nullptr) {
  std::vector<char> buf;
  caf::binary_serializer sink(sys, buf);
  auto err = sink(const_cast<caf::message&>(msg));
  REQUIRE_MESSAGE(!err, sys.render(err));
  caf::message back;
  caf::binary_deserializer source(sys, buf);
  err = source(back);
  REQUIRE_MESSAGE(!err, sys.render(err));
  CHECK(source.remaining() == 0);
  if (bytes) *bytes = std::move(buf);
  return back;
}

}  // namespace

TEST_CASE("caf: messages cross a registered actor system's serializer") {
  caf::actor_system_config cfg;
  add_message_types(cfg);
  caf::actor_system sys{cfg};

  auto roundtrip = [&](caf::message msg) { return message_roundtrip(sys, msg); };

  for (const auto& ev : sample_events()) {
    CAPTURE(json::to_json(ev));
    auto back = roundtrip(caf::make_message(ev));
    REQUIRE(back.match_elements<Event>());
    CHECK(json::to_json(back.get_as<Event>(0)) == json::to_json(ev));
  }

  ConversationEvents ce{"conv", sample_events()};
  auto back = roundtrip(caf::make_message(ce));
  REQUIRE(back.match_elements<ConversationEvents>());
  CHECK(json::to_json(back.get_as<ConversationEvents>(0)) == json::to_json(ce));

  ModelEvents me{7, 1, {TextDelta{"x"}, Completed{TokenUsage{1, 0, 1, 0, 2}, "stop"}}};
  auto back2 = roundtrip(caf::make_message(me, std::string("tail")));
  REQUIRE((back2.match_elements<ModelEvents, std::string>()));
  CHECK(json::to_json(back2.get_as<ModelEvents>(0)) == json::to_json(me));
  CHECK(back2.get_as<std::string>(1) == "tail");
}

TEST_CASE("caf: every type in the message list is registered and survives a round trip in a message") {
  caf::actor_system_config cfg;
  add_message_types(cfg);
  caf::actor_system sys{cfg};
  auto check_type = [&](auto value, const char* name) {
    using T = decltype(value);
    CAPTURE(name);
    auto registered = cfg.type_names_by_rtti.find(std::type_index(typeid(T)));
    REQUIRE(registered != cfg.type_names_by_rtti.end());
    CHECK(registered->second == name);
    std::vector<char> buf;
    auto back = message_roundtrip(sys, caf::make_message(std::move(value)), &buf);
    REQUIRE(back.template match_elements<T>());
    std::vector<char> again;
    caf::binary_serializer sink2(sys, again);
    REQUIRE(!sink2(back));
    CHECK(again == buf);
  };
#define LLMX_CHECK_TYPE(type, name) check_type(type{}, name);
  LLMX_MESSAGE_VALUE_TYPES(LLMX_CHECK_TYPE)
  LLMX_MESSAGE_HANDLE_TYPES(LLMX_CHECK_TYPE)
#undef LLMX_CHECK_TYPE
}

namespace {

template <class T>
struct is_atom : std::false_type {};
template <caf::atom_value V>
struct is_atom<caf::atom_constant<V>> : std::true_type {};

// Every type of every message of an actor interface is a CAF builtin or in the message list.
struct InterfaceCheck {
  const caf::actor_system_config& cfg;
  template <class T>
  void type(const char* iface) {
    if constexpr (std::is_void_v<T> || std::is_arithmetic_v<T> || std::is_same_v<T, std::string> || is_atom<T>::value) {
      return;
    } else {
      CHECK_MESSAGE(cfg.type_names_by_rtti.count(std::type_index(typeid(T))) == 1,
                    std::string(iface) << " carries a type missing from actors/message_list.hpp: " << typeid(T).name());
    }
  }
  template <class... Ts>
  void list(caf::detail::type_list<Ts...>, const char* iface) {
    (type<Ts>(iface), ...);
  }
  template <class In, class... Out>
  void signature(caf::typed_mpi<In, caf::output_tuple<Out...>>, const char* iface) {
    list(In{}, iface);
    (type<Out>(iface), ...);
  }
  template <class Handle>
  void interface(const char* iface) {
    [&]<class... Sigs>(caf::detail::type_list<Sigs...>) { (signature(Sigs{}, iface), ...); }(
        typename Handle::signatures{});
  }
};

}  // namespace

TEST_CASE("caf: every type any actor interface carries is in the message list") {
  caf::actor_system_config cfg;
  add_message_types(cfg);
  InterfaceCheck check{cfg};
#define LLMX_CHECK_INTERFACE(type, name) check.interface<type>(name);
  LLMX_MESSAGE_HANDLE_TYPES(LLMX_CHECK_INTERFACE)
#undef LLMX_CHECK_INTERFACE
}
