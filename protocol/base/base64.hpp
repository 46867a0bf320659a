// Standard base64 (RFC 4648, with padding), used for exec output chunks on the wire.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace llmx::base64 {

std::string encode(std::string_view bytes);
// nullopt when the text is not valid padded base64.
std::optional<std::string> decode(std::string_view text);

}  // namespace llmx::base64
