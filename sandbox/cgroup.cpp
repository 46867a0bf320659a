#include "sandbox/cgroup.hpp"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

namespace llmx::sandbox::cgroup {
namespace {

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The cgroup2 mount point, from /proc/self/mountinfo (field 5 of the line whose fstype is
// cgroup2).
std::string cgroup2_mount() {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string f, mount;
    for (int i = 0; i < 5 && fields >> f; ++i) mount = f;
    return mount;
  }
  return {};
}

Support compute() {
  Support s;
  const std::string mount = cgroup2_mount();
  if (mount.empty()) {
    s.detail = "no cgroup2 hierarchy is mounted";
    return s;
  }
  // Our own cgroup: the "0::<path>" line of /proc/self/cgroup.
  std::ifstream in("/proc/self/cgroup");
  std::string line, path;
  while (std::getline(in, line))
    if (line.rfind("0::", 0) == 0) path = line.substr(3);
  const std::string dir = mount + (path == "/" ? "" : path);
  Group probe;
  std::string error;
  if (!probe.create(dir, &error)) {
    s.detail = error;
    return s;
  }
  s.parent = dir;
  return s;
}

}  // namespace

Support detect() {
  static const Support s = compute();
  return s;
}

Group::~Group() {
  if (dir_.empty()) return;
  kill();
  // The last members may take a moment to be reaped; rmdir fails with EBUSY until then.
  for (int i = 0; i < 200 && ::rmdir(dir_.c_str()) != 0 && errno == EBUSY; ++i) ::usleep(1000);
}

bool Group::create(const std::string& parent, std::string* error) {
  static std::atomic<uint64_t> seq{0};
  std::string dir = parent + "/llmx-" + std::to_string(::getpid()) + "-" + std::to_string(seq++);
  if (::mkdir(dir.c_str(), 0755) != 0) {
    if (error) *error = "cannot create a cgroup in " + parent + ": " + std::strerror(errno);
    return false;
  }
  dir_ = std::move(dir);
  procs_ = dir_ + "/cgroup.procs";
  return true;
}

void Group::kill() {
  if (dir_.empty()) return;
  int fd = ::open((dir_ + "/cgroup.kill").c_str(), O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    const bool done = ::write(fd, "1", 1) == 1;
    ::close(fd);
    if (done) return;
  }
  std::ifstream in(procs_);  // before Linux 5.14
  for (pid_t pid; in >> pid;) ::kill(pid, SIGKILL);
}

bool Group::populated() const {
  if (dir_.empty()) return false;
  std::ifstream in(dir_ + "/cgroup.events");
  std::string key, value;
  while (in >> key >> value)
    if (key == "populated") return value != "0";
  return !first_line(procs_).empty();
}

int join(const char* procs_path) noexcept {
  int fd = ::open(procs_path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::write(fd, "0", 1) == 1 ? 0 : errno;
  ::close(fd);
  return err;
}

}  // namespace llmx::sandbox::cgroup
