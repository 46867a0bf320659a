#include "actors/compaction.hpp"

#include <algorithm>
#include <cctype>

#include "protocol/model/model_catalog.hpp"
#include "protocol/model/prompt_assets.hpp"
#include "protocol/store/rollout.hpp"
#include "protocol/base/text.hpp"

namespace llmx::compaction {

namespace {
std::string trim(std::string_view s) { return text::trim(s, " \t\r\n"); }

const std::string* call_id_of(const ResponseItem& item) {
  if (auto* c = item.get_if<FunctionCallItem>()) return &c->call_id;
  if (auto* o = item.get_if<FunctionCallOutputItem>()) return &o->call_id;
  return nullptr;
}
}  // namespace

std::string prompt(const Config& cfg) {
  if (cfg.compact_prompt) {
    auto p = trim(*cfg.compact_prompt);
    if (!p.empty()) return p;
  }
  return trim(prompts::get("compact"));
}

History request_input(const History& history, const std::string& prompt) {
  History input = history;
  MessageItem m;
  m.role = "user";
  m.content.push_back(ContentItem{InputText{prompt}});
  input.push_back(ResponseItem{std::move(m)});
  return input;
}

bool drop_oldest(History& kept) {
  if (kept.size() <= 1) return false;
  auto history = kept.to_vector();
  auto first = std::move(history.front());
  history.erase(history.begin());
  // A call without its output (or the reverse) is rejected by providers: drop the partner too.
  if (auto* id = call_id_of(first)) {
    auto partner = std::find_if(history.begin(), history.end(), [&](const ResponseItem& it) {
      auto* other = call_id_of(it);
      return other && *other == *id;
    });
    if (partner != history.end()) history.erase(partner);
  }
  kept = History(std::move(history));
  return true;
}

std::string summary_of(const std::vector<ResponseItem>& items) {
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    auto* m = it->get_if<MessageItem>();
    if (!m || m->role != "assistant") continue;
    for (auto c = m->content.rbegin(); c != m->content.rend(); ++c)
      if (auto* t = c->get_if<OutputText>()) return t->text;
  }
  return {};
}

std::vector<std::string> user_messages(const History& history) {
  std::vector<std::string> out;
  for (const auto& item : history)
    if (rollout::is_user_turn_message(item)) out.push_back(item.get_if<MessageItem>()->text());
  return out;
}

std::optional<int64_t> auto_limit(const Config& cfg, const models::ModelSpec& model) {
  if (cfg.model_auto_compact_token_limit && *cfg.model_auto_compact_token_limit > 0)
    return cfg.model_auto_compact_token_limit;
  if (auto window = models::window_of(model, cfg.model_context_window)) return *window * 9 / 10;
  return std::nullopt;
}

size_t user_message_budget(const Config& cfg, const models::ModelSpec& model) {
  auto limit = auto_limit(cfg, model);
  if (!limit || *limit <= 0) return rollout::kUserMessageBudgetBytes;
  return std::min(rollout::kUserMessageBudgetBytes, static_cast<size_t>(*limit));
}

}  // namespace llmx::compaction
