// Content digests for the wire: ids and versions derived from bytes.
#pragma once

#include <string>
#include <string_view>

namespace llmx::rpc {

// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

}  // namespace llmx::rpc
