// A Chat Completions stream through ChatStreamParser::on_data / on_end
// (protocol/model/chat_stream.hpp). The input is the data of several SSE events, cut at blank
// lines ("\n\n") as sse::Decoder would. The parser is documented to skip what it cannot read, so
// nothing is caught here: any exception is a finding (ModelStreamReader would turn it into a
// retried, cut stream). Every finished item must survive the rollout line it is stored as, and a
// parser that reads chunks of a proven shape without parsing them (chunk_shape.hpp) must yield
// exactly what one parsing every chunk yields.
#include <vector>

#include "fuzz_input.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/model/chat_stream.hpp"
#include "protocol/store/rollout.hpp"

using namespace llmx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ChatStreamParser parser("call"), parsing("call");
  parsing.reuse_shapes(false);
  std::vector<ModelEvent> out, expected;
  auto status = ChatStreamParser::Status::more;
  for (auto event : fuzz::split(fuzz::text_of(data, size), "\n\n")) {
    status = parser.on_data(event, out);
    fuzz::require(parsing.on_data(event, expected) == status, "a known shape does not change the status");
    if (status != ChatStreamParser::Status::more) break;
  }
  if (status == ChatStreamParser::Status::more)
    fuzz::require(parser.on_end(out) == parsing.on_end(expected), "a known shape does not change the end");
  fuzz::require(out.size() == expected.size(), "a known shape yields as many events as the parse");
  for (size_t i = 0; i < out.size(); ++i)
    fuzz::require(json::to_json(out[i]) == json::to_json(expected[i]), "a known shape yields the parse's events");
  for (const auto& ev : out)
    if (const auto* done = ev.get_if<ItemDone>())
      fuzz::require(rollout::decode_line(rollout::encode_line(std::chrono::system_clock::time_point{}, done->item)).has_value(),
                    "a streamed item reads back from its rollout line");
  return 0;
}
