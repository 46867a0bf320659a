#include "protocol/rpc/v2_history.hpp"

#include <fmt/format.h>

#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/v2_events.hpp"
#include "protocol/store/rollout.hpp"

namespace llmx::v2 {

RawJson source_of(const std::string& stored_source) {
  if (!stored_source.empty() && stored_source.front() == '{') return RawJson{stored_source};
  if (stored_source.empty()) return RawJson{"\"unknown\""};
  return RawJson{json::to_json(stored_source == "mcp" ? std::string("appServer") : stored_source)};
}

Thread thread_of(const threads::ThreadSummary& s, const std::string& default_provider) {
  Thread t;
  t.id = s.id;
  t.preview = s.preview;
  t.modelProvider = s.model_provider.value_or(default_provider);
  t.createdAt = s.created_unix;
  t.updatedAt = s.updated_unix ? s.updated_unix : s.created_unix;
  t.path = s.path;
  t.cwd = s.cwd;
  t.cliVersion = s.cli_version;
  t.source = source_of(s.source);
  if (s.git) t.gitInfo = GitInfo{s.git->commit_hash, s.git->branch, s.git->repository_url};
  if (s.name) t.name = *s.name;
  return t;
}

namespace {

ThreadItem user_item(const std::string& id, const UserMessageEvent& m) {
  std::vector<UserInput> content;
  if (!m.message.empty()) content.push_back(UserInput{TextInput{m.message}});
  for (const auto& url : m.images) content.push_back(UserInput{ImageInput{url}});
  return user_message_item(id, content);
}

}  // namespace

StoredHistory history_of(std::string_view text) {
  StoredHistory h;
  size_t next_turn = 0, next_item = 0;
  bool open = false;
  auto open_turn = [&] {
    Turn t;
    t.id = fmt::format("turn-{}", ++next_turn);
    t.status = TurnStatus::completed;
    h.turns.push_back(std::move(t));
    open = true;
  };
  auto add = [&](std::string item_json) {
    if (!open) open_turn();
    h.turns.back().items.push_back(ThreadItem{RawJson{std::move(item_json)}});
  };
  auto item_id = [&] { return fmt::format("item-{}", ++next_item); };
  rollout::for_each_line(text, [&](std::string_view line, bool) {
    auto decoded = rollout::decode_line(line);
    if (!decoded) return;  // garbage and a cut last line, as rollout::load skips them
    if (std::holds_alternative<rollout::TurnContext>(decoded->item)) {
      open_turn();
      return;
    }
    auto* ev = std::get_if<EventMsg>(&decoded->item);
    if (!ev) return;
    if (auto* u = ev->get_if<UserMessageEvent>()) {
      if (!open) open_turn();
      h.turns.back().items.push_back(user_item(item_id(), *u));
    } else if (auto* a = ev->get_if<AgentMessageEvent>()) {
      add(text_item("agentMessage", item_id(), a->message));
    } else if (auto* r = ev->get_if<AgentReasoningEvent>()) {
      add(text_item("reasoning", item_id(), r->text));
    } else if (auto* m = ev->get_if<McpToolCallEndEvent>()) {
      add(mcp_item(item_id(), m->invocation, m));
    } else if (ev->is<TurnAbortedEvent>()) {
      if (open) h.turns.back().status = TurnStatus::interrupted;
    } else if (auto* back = ev->get_if<ThreadRolledBackEvent>()) {
      h.turns.resize(h.turns.size() - std::min<size_t>(back->num_turns, h.turns.size()));
      open = false;
    } else if (auto* n = ev->get_if<ThreadNameUpdatedEvent>()) {
      h.name = n->thread_name;
    }
  });
  return h;
}

}  // namespace llmx::v2
