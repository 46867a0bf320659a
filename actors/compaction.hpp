// Compaction (engine.md §1.12, DECISIONS E14) as plain code: the request it sends, how its
// answer becomes the new history, and when a turn should compact on its own.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/config/config.hpp"
#include "protocol/core/history.hpp"
#include "protocol/core/items.hpp"
#include "protocol/model/provider_models.hpp"

namespace llmx::compaction {

// The compaction prompt: `compact_prompt` (trimmed; files already read by the config) or ours.
std::string prompt(const Config& cfg);

// The input of a compaction request: the history plus the prompt as a user message. It shares
// the history's items (no copy); the prompt is its own and never recorded.
History request_input(const History& history, const std::string& prompt);

// Drops the oldest item of a compaction request's history (with the call or output paired
// with it). False when at most one item is left: nothing more can be dropped. Copies the items
// it keeps: only a provider that said the history does not fit asks for this.
bool drop_oldest(History& history);

// The summary: the text of the last assistant message among `items` ("" if none).
std::string summary_of(const std::vector<ResponseItem>& items);

// The texts of the user turn messages of a history (not instructions, not environment context).
std::vector<std::string> user_messages(const History& history);

// The auto-compaction threshold for these settings (E14): `model_auto_compact_token_limit`,
// else 90% of the context window (configured, else the provider's word for the model, else the
// built-in table), else none.
std::optional<int64_t> auto_limit(const Config& cfg, const models::ModelSpec& model);

// The bytes of user messages a compacted history keeps for these settings: the reference's 80000
// (20000 tokens), but never more than a quarter of auto_limit (limit tokens / 4, at 4 bytes a
// token). With a small window (a local 8k model) the reference keeps more than the limit, and
// every later turn ends "still above the token limit"; a quarter leaves the rest for the work.
size_t user_message_budget(const Config& cfg, const models::ModelSpec& model);

inline constexpr std::string_view kCompletedMessage = "Compact task completed";
inline constexpr std::string_view kAccuracyWarning =
    "Heads up: Long conversations and multiple compactions can cause the model to be less accurate. Start a new "
    "conversation when possible to keep conversations small and targeted.";

}  // namespace llmx::compaction
