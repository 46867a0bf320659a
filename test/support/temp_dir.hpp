// The one scratch folder for tests: made with mkdtemp under $TMPDIR (or /tmp), removed with
// everything in it when the object goes.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "protocol/base/files.hpp"

namespace llmx::test {

class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "llmx-test") : TempDir(prefix, default_parent()) {}
  // Under a chosen folder (/dev/shm for memory, /var/tmp outside /tmp...).
  TempDir(std::string_view prefix, const std::string& parent) {
    std::string tmpl = parent + "/" + std::string(prefix) + "-XXXXXX";
    if (!::mkdtemp(tmpl.data()))
      throw std::runtime_error("mkdtemp in " + parent + " failed: " + std::string(std::strerror(errno)));
    path_ = tmpl;
  }
  static std::string default_parent() {
    const char* tmp = ::getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }
  std::string at(std::string_view name) const { return file(name); }
  // Writes `content` to path()/name (creating parent directories); returns the full path.
  std::string write(std::string_view name, std::string_view content) const {
    std::string p = file(name);
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!f) throw std::runtime_error("cannot write " + p);
    return p;
  }
  std::optional<std::string> read(std::string_view name) const { return files::read(file(name)); }
  bool exists(std::string_view name) const { return std::filesystem::exists(file(name)); }
  void remove(std::string_view name) const { std::filesystem::remove(file(name)); }

 private:
  std::string path_;
};

}  // namespace llmx::test
