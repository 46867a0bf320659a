// The apply_patch envelope (sandbox/apply_patch.hpp): patch::parse, the shell forms
// patch::intercept_shell recognises, and for a patch that parses, patch::verify and patch::apply
// against files kept in memory (never the disk). Input: the patch, then optionally a NUL byte and
// the text every file the patch reads starts with.
#include <map>
#include <string>

#include "fuzz_input.hpp"
#include "sandbox/apply_patch.hpp"

using namespace llmx;
using patch::Result;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto input = fuzz::text_of(data, size);
  auto nul = input.find('\0');
  auto text = input.substr(0, nul);
  std::string original(nul == std::string_view::npos ? "" : input.substr(nul + 1));

  patch::intercept_shell({"apply_patch", std::string(text)}, "/w");
  patch::intercept_shell({"bash", "-lc", std::string(text)}, "/w");
  auto parsed = patch::parse(text);
  auto* p = std::get_if<patch::Patch>(&parsed);
  if (!p) {
    std::get<patch::ParseError>(parsed).display();
    return 0;
  }

  // Every file exists with `original` until the patch writes or deletes it.
  std::map<std::string, std::string> written;
  std::map<std::string, bool> deleted;
  auto read = [&](const std::string& path) {
    if (deleted[path]) return Result<std::string>::fail("No such file or directory");
    auto it = written.find(path);
    return Result<std::string>::ok(it != written.end() ? it->second : original);
  };
  patch::verify(*p, "/w", read);
  patch::FileAccess files;
  files.read = read;
  files.write = [&](const std::string& path, const std::string& content) -> std::optional<std::string> {
    written[path] = content;
    deleted[path] = false;
    return std::nullopt;
  };
  files.remove = [&](const std::string& path) -> std::optional<std::string> {
    deleted[path] = true;
    written.erase(path);
    return std::nullopt;
  };
  patch::apply(*p, "/w", files);
  patch::files_read(*p, "/w");
  return 0;
}
