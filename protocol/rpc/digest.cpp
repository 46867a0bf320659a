#include "protocol/rpc/digest.hpp"

#include "protocol/base/crypto.hpp"

namespace llmx::rpc {

std::string sha256_hex(std::string_view bytes) { return crypto::hex(crypto::sha256(bytes)); }

}  // namespace llmx::rpc
