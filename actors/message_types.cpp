#include "actors/message_list.hpp"
#include "actors/refusal.hpp"

namespace llmx {

void add_message_types(caf::actor_system_config& cfg) {
  add_refusal_category(cfg);
#define LLMX_REGISTER(type, name) cfg.add_message_type<type>(name);
  LLMX_MESSAGE_VALUE_TYPES(LLMX_REGISTER)
  LLMX_MESSAGE_HANDLE_TYPES(LLMX_REGISTER)
#undef LLMX_REGISTER
}

}  // namespace llmx
