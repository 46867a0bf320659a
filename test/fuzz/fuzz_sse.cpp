// A provider's text/event-stream body through sse::Decoder (transport/sse_decoder.hpp). The
// decoder promises the same events however the bytes are split: the input is decoded whole and
// again in pieces whose sizes its first byte picks, and the two must agree.
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "transport/sse_decoder.hpp"

using namespace llmx;

namespace {

std::vector<sse::Event> decode(std::string_view body, size_t piece) {
  sse::Decoder d;
  std::vector<sse::Event> out;
  auto sink = [&](sse::Event&& e) { out.push_back(std::move(e)); };
  for (size_t at = 0; at < body.size(); at += piece) {
    bool ok = d.feed(body.substr(at, piece), sink);
    fuzz::require(ok, "feed succeeds under the 64 MiB default limit");
  }
  d.finish(sink);
  return out;
}

bool same(const std::vector<sse::Event>& a, const std::vector<sse::Event>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].event != b[i].event || a[i].data != b[i].data) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t piece = data[0] % 7 + 1;  // 1..7 bytes: \r\n and field names cut every way
  auto body = fuzz::text_of(data + 1, size - 1);
  auto whole = decode(body, body.size() + 1);
  fuzz::require(same(whole, decode(body, piece)), "the same events however the bytes are split");
  return 0;
}
