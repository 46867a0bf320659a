// The escape suite's fixture: a git workspace, an "outside" directory next to it (not under /tmp,
// which is a writable root), a fake $LLMX_HOME holding secrets, listening sockets, and helpers
// that run a hostile script under the sandbox and judge the outcome from outside it.
#pragma once

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include "test/support/env_guard.hpp"
#include "test/support/temp_dir.hpp"
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <condition_variable>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "sandbox/exec_env.hpp"
#include "sandbox/process.hpp"
#include "sandbox/process_fd.hpp"

namespace llmx::escape {

using namespace llmx::sandbox;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct Waiter : ProcessHandler {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<ExecResult> result;
  std::string out;
  void on_output(Stream, std::string_view bytes) override {
    std::lock_guard lock(mu);
    out.append(bytes);
    cv.notify_all();
  }
  void on_exit(ExecResult r) override {
    std::lock_guard lock(mu);
    result = std::move(r);
    cv.notify_all();
  }
  // Until the live output contains `text` (false on timeout or exit without it).
  bool wait_output(const std::string& text, std::chrono::seconds limit = 20s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, limit, [&] { return out.find(text) != std::string::npos; });
  }
  ExecResult wait(std::chrono::seconds limit = 30s) {
    std::unique_lock lock(mu);
    REQUIRE(cv.wait_for(lock, limit, [&] { return result.has_value(); }));
    return *result;
  }
};

inline std::string slurp(const std::string& path) { return llmx::files::read(path).value_or(""); }

inline void spit(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

inline bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

inline const char* kPython = "/usr/bin/python3";

// Host processes (seen from outside any sandbox) running `sleep <token>`, zombies excepted.
inline int processes_with(const std::string& token) {
  int n = 0;
  DIR* proc = ::opendir("/proc");
  if (!proc) return -1;
  while (dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string cmdline = slurp(std::string("/proc/") + e->d_name + "/cmdline");
    std::string stat = slurp(std::string("/proc/") + e->d_name + "/stat");
    const size_t rp = stat.rfind(')');
    if (rp != std::string::npos && rp + 2 < stat.size() && stat[rp + 2] == 'Z') continue;
    for (auto& c : cmdline)
      if (c == '\0') c = ' ';
    if (cmdline == "sleep " + token + " ") ++n;
  }
  ::closedir(proc);
  return n;
}

// Polls until no host process carries `token` (true) or `limit` passes (false).
inline bool all_gone(const std::string& token, std::chrono::milliseconds limit = 3000ms) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (processes_with(token) > 0) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// A sleep that is recognisable in the host's process list: `sleep <token>` (a number).
inline std::string unique_sleep_token() {
  static int n = 0;
  return std::to_string(8000 + (++n)) + "." + std::to_string(::getpid());
}

// Outside /tmp when the tests run from there: the sandbox mounts a fresh /tmp for commands.
inline std::string escape_parent() {
  std::string parent = fs::current_path().string();
  return parent.rfind("/tmp", 0) == 0 ? "/var/tmp" : parent;
}

struct Escape {
  llmx::test::TempDir dir{"llmx-escape", escape_parent()};
  std::string base = dir.path(), ws, outside, secret, home;
  int tcp_port = 0, udp_port = 0;
  UniqueFd tcp, udp, unix_listener;
  std::string unix_path;
  ProcessLoop loop;

  Escape() {
    ::chmod(base.c_str(), 0755);  // the unprivileged cases traverse it
    ws = base + "/ws";
    outside = base + "/outside";
    secret = outside + "/secret.txt";
    home = base + "/llmx-home";
    fs::create_directories(ws + "/.git/hooks");
    fs::create_directories(ws + "/src");
    fs::create_directories(outside);
    fs::create_directories(home);
    spit(ws + "/.git/config", "[core]\n");
    spit(ws + "/.git/HEAD", "ref: refs/heads/main\n");
    spit(ws + "/src/main.c", "int main;\n");
    spit(ws + "/README", "readme\n");
    spit(secret, "orig\n");
    spit(outside + "/hard.txt", "orig\n");
    spit(home + "/auth.json", "{\"OPENAI_API_KEY\":\"sk-auth-secret\"}\n");
    spit(home + "/.env", "OPENAI_API_KEY=sk-dotenv-secret\n");
    ::chmod(secret.c_str(), 0644);
    REQUIRE(::link((outside + "/hard.txt").c_str(), (ws + "/hard").c_str()) == 0);
    fs::create_directory_symlink(outside, ws + "/dirlink");
    fs::create_symlink(secret, ws + "/filelink");
    listen_sockets();
  }
  void listen_sockets() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    tcp.reset(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    REQUIRE(::bind(tcp.get(), (sockaddr*)&a, sizeof a) == 0);
    REQUIRE(::listen(tcp.get(), 8) == 0);
    ::getsockname(tcp.get(), (sockaddr*)&a, &len);
    tcp_port = ntohs(a.sin_port);
    a.sin_port = 0;
    udp.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    REQUIRE(::bind(udp.get(), (sockaddr*)&a, sizeof a) == 0);
    len = sizeof a;
    ::getsockname(udp.get(), (sockaddr*)&a, &len);
    udp_port = ntohs(a.sin_port);
    unix_path = base + "/sock";
    sockaddr_un u{};
    u.sun_family = AF_UNIX;
    std::snprintf(u.sun_path, sizeof u.sun_path, "%s", unix_path.c_str());
    unix_listener.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    REQUIRE(::bind(unix_listener.get(), (sockaddr*)&u, sizeof u) == 0);
    REQUIRE(::listen(unix_listener.get(), 8) == 0);
  }

  bool tcp_got_connection() {
    pollfd p{tcp.get(), POLLIN, 0};
    return ::poll(&p, 1, 100) > 0;
  }
  bool udp_got_datagram() {
    pollfd p{udp.get(), POLLIN, 0};
    return ::poll(&p, 1, 100) > 0;
  }
  bool unix_got_connection() {
    pollfd p{unix_listener.get(), POLLIN, 0};
    return ::poll(&p, 1, 100) > 0;
  }

  SpawnRequest request(SandboxMode mode, const std::string& script, SandboxOptions options = {},
                       bool network = false) {
    SandboxPolicy policy;
    policy.mode = mode;
    policy.network_access = network;
    policy.exclude_tmpdir_env_var = true;  // $TMPDIR could contain this test's directories
    // The parent holds secrets; the default env policy must keep them from the child.
    EnvMap parent = {{"PATH", "/usr/bin:/bin"},
                     {"HOME", "/root"},
                     {"MY_API_KEY", "sk-secret"},
                     {"GITHUB_TOKEN", "ghp-secret"},
                     {"DB_PASSWORD_SECRET", "pw"},
                     {"MY_PASSWORD", "hunter2"},
                     {"DATABASE_URL", "postgres://user:dburl-secret@db/app"},
                     {"LANG", "C"}};
    SpawnRequest r;
    r.argv = {"/bin/sh", "-c", script};
    r.cwd = ws;
    r.sandbox_cwd = ws;
    r.env = build_child_env({}, parent, !policy.has_network());
    if (mode != SandboxMode::danger_full_access) r.sandbox = policy;
    if (options.llmx_home.empty()) options.llmx_home = home;
    r.sandbox_options = options;
    r.timeout_ms = 20000;
    return r;
  }

  ExecResult run(SandboxMode mode, const std::string& script, SandboxOptions options = {},
                 bool network = false) {
    auto w = std::make_shared<Waiter>();
    loop.spawn(request(mode, script, options, network), w);
    ExecResult r = w->wait();
    CHECK(r.spawn_error == "");
    return r;
  }
  ExecResult ww(const std::string& script, SandboxOptions o = {}) {
    return run(SandboxMode::workspace_write, script, o);
  }
  ExecResult ro(const std::string& script, SandboxOptions o = {}) {
    return run(SandboxMode::read_only, script, o);
  }
};

// The command ran sandboxed, failed, and said why.
#define EXPECT_DENIED(res, message)     \
  do {                                  \
    ExecResult r_ = (res);              \
    CAPTURE(r_.aggregated);             \
    CHECK(r_.sandboxed);                \
    CHECK(r_.exit_code != 0);           \
    CHECK(has(r_.aggregated, message)); \
  } while (0)

inline constexpr const char* kReadOnlyFs = "Read-only file system";

}  // namespace llmx::escape
