// A Chat Completions stream through ChatStreamParser::on_data / on_end
// (protocol/model/chat_stream.hpp). The input is the data of several SSE events, cut at blank
// lines ("\n\n") as sse::Decoder would. The parser is documented to skip what it cannot read, so
// nothing is caught here: any exception is a finding (ModelStreamReader would turn it into a
// retried, cut stream). Every finished item must survive the rollout line it is stored as.
#include <vector>

#include "fuzz_input.hpp"
#include "protocol/model/chat_stream.hpp"
#include "protocol/store/rollout.hpp"

using namespace llmx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ChatStreamParser parser("call");
  std::vector<ModelEvent> out;
  auto status = ChatStreamParser::Status::more;
  for (auto event : fuzz::split(fuzz::text_of(data, size), "\n\n")) {
    status = parser.on_data(event, out);
    if (status != ChatStreamParser::Status::more) break;
  }
  if (status == ChatStreamParser::Status::more) parser.on_end(out);
  for (const auto& ev : out)
    if (const auto* done = ev.get_if<ItemDone>())
      fuzz::require(rollout::decode_line(rollout::encode_line(std::chrono::system_clock::time_point{}, done->item)).has_value(),
                    "a streamed item reads back from its rollout line");
  return 0;
}
