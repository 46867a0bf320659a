// protocol/base/line_cutter.hpp: lines split anywhere, CR stripped, over-long lines dropped whole.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "protocol/base/line_cutter.hpp"

using namespace llmx;

TEST_CASE("line cutter: lines across feeds, CRLF, an oversized line dropped whole, the last line at the end") {
  LineCutter cut(8);
  std::vector<std::string> lines;
  size_t oversized = 0;
  auto on_line = [&](std::string& l) { lines.push_back(std::move(l)); };
  auto on_big = [&] { ++oversized; };
  cut.feed("ab", on_line, on_big);
  cut.feed("c\r\n\nwaytoolongline", on_line, on_big);
  cut.feed("stillgoing\nok\nlast", on_line, on_big);
  CHECK(lines == std::vector<std::string>{"abc", "", "ok"});
  CHECK(oversized == 1);
  cut.finish(on_line, on_big);
  CHECK(lines.back() == "last");
  cut.feed("0123456789", on_line, on_big);
  cut.finish(on_line, on_big);
  CHECK(oversized == 2);
}
