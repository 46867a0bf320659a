// Building Chat Completions request bodies (engine.md §2.3, DECISIONS E3–E6).
#pragma once

#include <string>
#include <vector>

#include "protocol/items.hpp"
#include "protocol/provider.hpp"

namespace llmx {

// A function tool offered to the model.
struct ToolSpec {
  std::string name;
  std::string description;
  RawJson parameters;  // JSON Schema of the arguments
  LLMX_FIELDS(v("name", s.name); v("description", s.description); v("parameters", s.parameters))
};

// Everything one model request needs, independent of the wire.
struct Prompt {
  std::string model;
  std::string instructions;         // system prompt
  std::vector<ResponseItem> input;  // history, oldest first
  std::vector<ToolSpec> tools;
  bool parallel_tool_calls = false;
  LLMX_FIELDS(v("model", s.model); v("instructions", s.instructions); v("input", s.input);
              v("tools", s.tools); v("parallel_tool_calls", s.parallel_tool_calls))
};

// Makes a history valid for strict providers: every tool call gets exactly one output (a
// synthetic "aborted" one right after it when missing), outputs without a call are dropped,
// and calls whose arguments are not valid JSON are sent with `{}` (their output keeps the error).
std::vector<ResponseItem> normalize_history(const std::vector<ResponseItem>& items);

// Anthropic-family models get cache_control markers (E6): model name contains "claude", unless
// the provider's `prompt_cache` says otherwise.
bool wants_prompt_cache(const std::string& model, const ModelProviderInfo& provider);

// The JSON body of POST /chat/completions.
std::string build_chat_request(const Prompt& prompt, const ModelProviderInfo& provider);

}  // namespace llmx
