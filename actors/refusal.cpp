#include "actors/refusal.hpp"

namespace llmx {

namespace {
const caf::atom_value kCategory = caf::atom("llmx");
}  // namespace

caf::error refuse(Refusal why, std::string message) {
  return caf::error(static_cast<uint8_t>(why), kCategory, caf::make_message(std::move(message)));
}

std::string error_text(const caf::error& err) {
  const auto& ctx = err.context();
  if (ctx.size() > 0 && ctx.match_element<std::string>(ctx.size() - 1)) return ctx.get_as<std::string>(ctx.size() - 1);
  return to_string(err);
}

bool is_request_error(const caf::error& err) {
  return err.category() == kCategory && err.code() == static_cast<uint8_t>(Refusal::request);
}

void add_refusal_category(caf::actor_system_config& cfg) {
  cfg.add_error_category(kCategory, [](uint8_t code, caf::atom_value, const caf::message& ctx) -> std::string {
    std::string text = code == static_cast<uint8_t>(Refusal::request) ? "bad request" : "failed";
    if (ctx.size() > 0 && ctx.match_element<std::string>(0)) text += ": " + ctx.get_as<std::string>(0);
    return text;
  });
}

}  // namespace llmx
