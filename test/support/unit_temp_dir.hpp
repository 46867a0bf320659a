// A scratch directory for unit tests that touch files: made with mkdtemp, removed afterwards.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

namespace llmx::test {

struct ScratchDir {
  std::string path;
  explicit ScratchDir(const std::string& prefix = "llmx_unit") {
    std::string tmpl = "/tmp/" + prefix + "_XXXXXX";
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string at(const std::string& rel) const { return path + "/" + rel; }
  void write(const std::string& rel, const std::string& content) const {
    std::filesystem::create_directories(std::filesystem::path(at(rel)).parent_path());
    std::ofstream(at(rel), std::ios::binary) << content;
  }
  std::optional<std::string> read(const std::string& rel) const {
    std::ifstream f(at(rel), std::ios::binary);
    if (!f) return std::nullopt;
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  bool exists(const std::string& rel) const { return std::filesystem::exists(at(rel)); }
  void remove(const std::string& rel) const { std::filesystem::remove(at(rel)); }
};

}  // namespace llmx::test
