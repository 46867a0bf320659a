// Provider dialects of the Chat Completions wire: the same Script rendered the way OpenAI,
// Claude and Gemini behind LiteLLM, DeepSeek, vLLM/Ollama and Azure OpenAI shape their streams,
// headers and non-streaming answers, so clients get tested against each provider's quirks.
#pragma once

#include "tools/mock-llm/writer.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mockllm {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// Accepts the names in dialect_names(); "default" is the original mock output.
std::optional<Dialect> parse_dialect(std::string_view name);
const std::vector<std::string> &dialect_names();

// Headers the provider sends with every answer (rate limits, request ids); `seed` makes the
// ids differ per request.
HeaderList dialect_headers(Dialect d, const std::string &seed);

// Renderer for the streamed answer in ctx.dialect (not Default, which sse_writer renders).
std::shared_ptr<FrameRenderer> make_dialect_renderer(const Script &script,
                                                     const ResponseContext &ctx);

// The non-streaming chat.completion object in ctx.dialect (dialect_completion.cpp).
std::string dialect_completion_json(const Script &script, const ResponseContext &ctx);

// --- shared by the stream and the non-streaming answer --------------------------------------

// `n` characters of `alphabet` that look random but follow from `seed`, so an id repeats
// within one response (the start chunk and the folded message agree) and differs across them.
std::string mock_token(std::string_view seed, size_t n, std::string_view alphabet);
inline constexpr std::string_view kAlnum =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
inline constexpr std::string_view kHex = "0123456789abcdef";
inline constexpr std::string_view kBase64 =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The provider's id for the tool call started by `start`; empty for dialects that send none.
std::string tool_call_id(const ResponseContext &ctx, const Event &start);

// The usage object, with the provider's cache and reasoning details.
std::string dialect_usage_json(Dialect d, size_t prompt_tokens, size_t content_deltas,
                               size_t reasoning_bytes);

// Claude's signature of a finished thinking block.
std::string thinking_signature(const ResponseContext &ctx);

// Azure's content_filter_results: all "safe", or "violence" filtered.
std::string azure_filter_results(bool violence_filtered);

// finish_reason as the dialect reports it (Gemini says "stop" even after tool calls).
std::string dialect_finish_reason(Dialect d, const std::string &reason);

} // namespace mockllm
