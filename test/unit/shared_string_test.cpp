// Unit tests for SharedString (protocol/base/shared_string.hpp): copies share one buffer, and the
// encoders treat it as a plain string (JSON both ways, the exported schema).
#include <doctest/doctest.h>

#include "protocol/base/json_codec.hpp"
#include "protocol/base/schema_gen.hpp"

using namespace llmx;

namespace shared_string_test {
struct Delta {
  SharedString item_id;
  std::optional<SharedString> thread_id;
  LLMX_FIELDS(v("item_id", s.item_id); v("thread_id", s.thread_id))
};
}  // namespace shared_string_test

TEST_CASE("shared string: copies share the buffer, so a copy allocates nothing") {
  SharedString id(std::string("0199a6c4-1f7e-7c3a-9b1e-5d2f8e4a6b0c"));
  SharedString copy = id;
  CHECK(copy.str().data() == id.str().data());
  CHECK(copy == id);
  CHECK(copy == "0199a6c4-1f7e-7c3a-9b1e-5d2f8e4a6b0c");
  CHECK(copy == std::string("0199a6c4-1f7e-7c3a-9b1e-5d2f8e4a6b0c"));
  const std::string& as_string = copy;
  CHECK(as_string.size() == 36);
}

TEST_CASE("shared string: equal text in different buffers compares equal, and the default is empty") {
  SharedString a("item"), b(std::string("item")), c("other");
  CHECK(a == b);
  CHECK_FALSE(a == c);
  SharedString none;
  CHECK(none.empty());
  CHECK(none.size() == 0);
  CHECK(none == "");
  CHECK(none == SharedString(std::string()));
}

TEST_CASE("shared string: JSON writes and reads it as a string") {
  shared_string_test::Delta d{SharedString("i-1"), SharedString("t \"1\"")};
  CHECK(json::to_json(d) == R"({"item_id":"i-1","thread_id":"t \"1\""})");
  auto back = json::parse_as<shared_string_test::Delta>(R"({"item_id":"i-2"})");
  CHECK(back.item_id == "i-2");
  CHECK_FALSE(back.thread_id);
  CHECK_THROWS(json::parse_as<shared_string_test::Delta>(R"({"item_id":7})"));
}

TEST_CASE("shared string: the schema describes it as a string") {
  CHECK(schema::typescript_of<shared_string_test::Delta>() ==
        "export type Delta = { item_id: string, thread_id?: string, };");
}
