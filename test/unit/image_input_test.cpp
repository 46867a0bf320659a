// Local images (`llmx exec --image`): the type check from a file's first bytes agrees with the
// data URL the model receives.
#include <doctest/doctest.h>

#include <fstream>

#include "protocol/core/items.hpp"
#include "test/support/unit_temp_dir.hpp"

using namespace llmx;

TEST_CASE("images: the type comes from the first bytes, text, empty and missing files are none") {
  test::ScratchDir dir;
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir.file(name), std::ios::binary) << bytes;
    return dir.file(name);
  };
  const std::string png = write("a.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\0", 12));
  CHECK(image_type(png) == std::optional<std::string_view>("image/png"));
  CHECK(image_data_url(png).value_or("").starts_with("data:image/png;base64,"));
  CHECK(image_type(write("a.jpg", "\xff\xd8\xff\xe0 jpeg")) == std::optional<std::string_view>("image/jpeg"));
  CHECK(image_type(write("a.gif", "GIF89a....")) == std::optional<std::string_view>("image/gif"));
  CHECK(image_type(write("a.webp", std::string("RIFF\x10\0\0\0WEBPVP8 ", 16))) == std::optional<std::string_view>("image/webp"));
  for (const auto& path : {write("notes.txt", "not a picture"), write("empty.png", ""), dir.file("missing.png")}) {
    CHECK_MESSAGE(!image_type(path), path);
    CHECK_MESSAGE(!image_data_url(path), path);
  }
}
