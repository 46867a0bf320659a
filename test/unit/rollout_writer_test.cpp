// The rollout writer: whole lines, batching, many files with few descriptors, failures.
#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>
#include "protocol/base/files.hpp"

#include "test/support/unit_temp_dir.hpp"
#include "transport/rollout_writer.hpp"

using namespace llmx;
using llmx::test::ScratchDir;

namespace {
std::string read_all(const std::string& path) { return llmx::files::read(path).value_or(""); }
}  // namespace

TEST_CASE("rollout writer: lines are written whole, in order, after flush, into new directories") {
  ScratchDir dir;
  RolloutWriter w;
  auto path = dir.at("sessions/2026/11/22/rollout-a.jsonl");
  w.append(path, {R"({"a":1})", R"({"b":2})"});
  CHECK(w.has_pending());
  CHECK_FALSE(std::filesystem::exists(path));  // nothing touches the disk before flush
  CHECK(w.flush().empty());
  CHECK(read_all(path) == "{\"a\":1}\n{\"b\":2}\n");
  w.append(path, {R"({"c":3})"});
  CHECK(w.flush().empty());
  CHECK(read_all(path) == "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);  // conversations are private
}

TEST_CASE("rollout writer: many files share a bounded number of descriptors") {
  ScratchDir dir;
  RolloutWriter w(2);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 5; ++i) w.append(dir.at("f" + std::to_string(i)), {"line" + std::to_string(round)});
    CHECK(w.flush().empty());
    CHECK(w.open_files() <= 2);
  }
  for (int i = 0; i < 5; ++i) CHECK(dir.read("f" + std::to_string(i)).value_or("") == "line0\nline1\nline2\n");
}

TEST_CASE("rollout writer: the destructor writes what is queued") {
  ScratchDir dir;
  {
    RolloutWriter w;
    w.append(dir.at("x.jsonl"), {"queued"});
  }
  CHECK(dir.read("x.jsonl").value_or("") == "queued\n");
}

TEST_CASE("rollout writer: an unwritable folder is reported per file and later appends retry") {
  if (geteuid() == 0) return;  // root ignores permissions
  ScratchDir dir;
  std::filesystem::create_directories(dir.at("ro"));
  ::chmod(dir.at("ro").c_str(), 0500);
  RolloutWriter w;
  w.append(dir.at("ro/sub/a.jsonl"), {"x"});
  w.append(dir.at("ok.jsonl"), {"y"});
  auto failures = w.flush();
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].path == dir.at("ro/sub/a.jsonl"));
  CHECK(failures[0].message.find("cannot create") != std::string::npos);
  CHECK(dir.read("ok.jsonl").value_or("") == "y\n");
  ::chmod(dir.at("ro").c_str(), 0700);
  w.append(dir.at("ro/sub/a.jsonl"), {"z"});
  CHECK(w.flush().empty());
  CHECK(dir.read("ro/sub/a.jsonl").value_or("") == "z\n");
}

