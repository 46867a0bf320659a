// Conversations on worker nodes (issue 15): `llmx node` processes on loopback, an
// `llmx mcp-server --nodes ...` front, and what a client sees when nodes come, go and misbehave.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "protocol/store/rollout.hpp"
#include "test/support/harness.hpp"

using namespace llmx::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

struct Cluster {
  TempDir home{"llmx-cluster"};
  MockLlm mock;
  std::vector<std::unique_ptr<NodeProcess>> nodes;
  // With `own_keys`, node i streams with the API key `node-i` (a node resolves the key from its
  // own environment), so the mock's recorded headers tell which node ran which turn.
  explicit Cluster(int n, bool own_keys = false) {
    for (int i = 0; i < n; ++i) {
      EnvVars env;
      if (own_keys) env.emplace_back("LLMX_API_KEY", "node-" + std::to_string(i));
      nodes.push_back(std::make_unique<NodeProcess>(home.path(), mock.url(), std::vector<std::string>{}, env));
    }
  }
  McpOptions front(std::vector<std::string> extra = {}) {
    McpOptions o;
    o.args = {"--nodes", node_list(nodes)};
    o.args.insert(o.args.end(), extra.begin(), extra.end());
    return o;
  }
};

}  // namespace

TEST_CASE("cluster: a front with three nodes spreads 300 conversations over them and answers every one") {
  Cluster c(3, true);
  McpClient mcp(c.home.path(), c.mock.url(), c.front());
  mcp.initialize();
  std::vector<std::string> ids;
  for (int i = 0; i < 300; ++i) ids.push_back(mcp.call_llmx("@mock:echo conversation " + std::to_string(i)));
  for (int i = 0; i < 300; ++i) {
    auto resp = mcp.wait_for_response(ids[i], 60s);
    INFO(mcp.diagnostics());
    REQUIRE_FALSE(result_is_error(resp));
    CHECK(result_text(resp) == "echo: conversation " + std::to_string(i));
  }
  // Each node ran a share of the turns, and the front itself ran none (its key is `test`).
  std::map<std::string, int> by_key;
  const Message headers(http_get(c.mock.url(), "/_mock/headers"));
  for (auto h : headers.at("/headers").get_array().value_unsafe())
    ++by_key[std::string(h["authorization"].get_string().value_unsafe())];
  int total = 0;
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    const int n = by_key["Bearer node-" + std::to_string(i)];
    CHECK_MESSAGE(n > 0, "node " << i << " stayed idle");
    total += n;
  }
  CHECK(total == 300);
  // Every rollout is in the front's store, written out when the front shuts down at EOF.
  mcp.close_stdin();
  CHECK(mcp.wait_exit(30s).describe() == "exit code 0");
  CHECK(rollout_files(c.home.file("sessions")).size() == 300);
}

TEST_CASE("cluster: kill -9 of a node mid-turn fails its turns with an error, and they resume elsewhere") {
  Cluster c(3);
  McpClient mcp(c.home.path(), c.mock.url(), c.front({"-c", "sandbox_mode=\"danger-full-access\""}));
  mcp.initialize();
  // Six long turns: two per node (each placement goes to the node with the fewest).
  const auto marker = unique_sleep(30);
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i)
    ids.push_back(mcp.call_llmx("turn " + std::to_string(i) + " @mock:shell cmd=" + marker[0] + " " + marker[1]));
  REQUIRE(wait_until_running(marker, 6, 20s));
  c.nodes[1]->process().kill(SIGKILL);
  // The dead node's two turns end with an error naming the loss; the others are still running.
  std::vector<std::string> lost;
  for (int i = 0; i < 100 && lost.size() < 2; ++i) {
    mcp.drain(100ms);
    lost.clear();
    for (auto& id : ids)
      if (!mcp.responses_for(id).empty()) lost.push_back(id);
  }
  INFO(mcp.diagnostics());
  REQUIRE(lost.size() == 2);
  for (auto& id : lost) {
    auto resp = mcp.responses_for(id).front();
    CHECK(result_is_error(resp));
    CHECK_MESSAGE(contains(result_text(resp), "was lost"), result_text(resp));
    CHECK(!events_of_type(mcp.events_for(id), "error").empty());
  }
  // The survivors finish once their commands end.
  kill_processes_with_argv(marker);
  for (auto& id : ids) {
    if (std::find(lost.begin(), lost.end(), id) != lost.end()) continue;
    auto resp = mcp.wait_for_response(id, 20s);
    CHECK_FALSE(result_is_error(resp));
  }
  // A lost conversation's next message resumes it on a live node, with its history.
  auto configured = events_of_type(mcp.events_for(lost[0]), "session_configured");
  REQUIRE(configured.size() == 1);
  const auto thread = configured[0].str("/params/msg/session_id");
  auto again = mcp.wait_for_response(mcp.call_reply(thread, "@mock:echo where were we"), 20s);
  INFO(result_text(again));
  REQUIRE_FALSE(result_is_error(again));
  CHECK(result_text(again) == "echo: where were we");
  auto sent = recorded_requests(c.mock);
  size_t last = 0;
  while (sent.has("/requests/" + std::to_string(last + 1))) ++last;
  CHECK(contains(sent.text("/requests/" + std::to_string(last)), marker[1]));
  // Every rollout is readable and holds its turn up to the kill (the user's message, the model's
  // call); the resumed one goes on in the same file. The front writes all out at EOF.
  mcp.close_stdin();
  CHECK(mcp.wait_exit(30s).describe() == "exit code 0");
  auto files = rollout_files(c.home.file("sessions"));
  CHECK(files.size() == 6);
  size_t resumed = 0;
  for (auto& f : files) {
    auto text = read_file(f);
    for (auto& line : split_lines(text)) CHECK_MESSAGE(llmx::rollout::decode_line(line).has_value(), line);
    CHECK(contains(text, marker[1]));
    CHECK(contains(text, R"("type":"function_call")"));
    if (contains(text, "where were we")) {
      ++resumed;
      CHECK(contains(f, thread));
    }
  }
  CHECK(resumed == 1);
}

TEST_CASE("cluster: nodes that start after the front get placements, with none attached a call says why") {
  TempDir home{"llmx-cluster"};
  MockLlm mock;
  const int port = closed_port();
  McpOptions o;
  o.args = {"-c", "cluster.nodes=[\"127.0.0.1:" + std::to_string(port) + "\"]"};  // config.toml's [cluster]
  McpClient mcp(home.path(), mock.url(), o);
  mcp.initialize();
  // Nothing listens there: after the first attempt the call fails with the reason.
  auto refused = mcp.wait_for_response(mcp.call_llmx("@mock:echo too early"), 20s);
  CHECK(result_is_error(refused));
  CHECK_MESSAGE(contains(result_text(refused), "no worker node is attached"), result_text(refused));
  // The node comes up on that port; the front retries every second and places the next call.
  NodeProcess node(home.path(), mock.url(), {"--listen", "127.0.0.1:" + std::to_string(port)});
  std::string answer;
  for (int i = 0; i < 50; ++i) {
    auto resp = mcp.wait_for_response(mcp.call_llmx("@mock:echo now"), 20s);
    answer = result_text(resp);
    if (!result_is_error(resp)) break;
    std::this_thread::sleep_for(200ms);
  }
  CHECK(answer == "echo: now");
}

TEST_CASE("cluster: garbage and a half-open connection do not crash a node, a wrong address or plain TCP beyond loopback is refused") {
  Cluster c(1);
  auto connect_to = [&](uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    return fd;
  };
  int garbage = connect_to(c.nodes[0]->port());
  std::string noise(4096, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 7919) & 0xff);
  (void)::write(garbage, noise.data(), noise.size());
  ::close(garbage);
  int half_open = connect_to(c.nodes[0]->port());  // connects, never speaks
  (void)::write(half_open, "\x00\x00", 2);
  std::this_thread::sleep_for(300ms);
  CHECK(c.nodes[0]->process().running());
  // A front still attaches and its turn runs. The garbage's header announced a payload of
  // gigabytes, which CAF 0.17 allocates before any handshake (see the README): on a loaded
  // machine the node may answer the first attach late, so the front's retries are allowed.
  McpClient mcp(c.home.path(), c.mock.url(), c.front());
  mcp.initialize();
  std::string answer;
  for (int i = 0; i < 30 * kSlowdown && answer != "echo: still here"; ++i) {
    answer = result_text(mcp.wait_for_response(mcp.call_llmx("@mock:echo still here"), 20s));
    if (answer != "echo: still here") std::this_thread::sleep_for(1s);
  }
  CHECK(answer == "echo: still here");
  ::close(half_open);

  auto env = llmx_env(c.home.path(), c.mock.url());
  auto wide = run_llmx({"node", "--listen", "0.0.0.0:0"}, env);
  CHECK(wide.status.describe() == "exit code 2");
  CHECK(contains(wide.err, "without TLS"));
  auto bad = run_llmx({"node", "--listen", "nonsense"}, env);
  CHECK(bad.status.describe() == "exit code 2");
  auto front = run_llmx({"mcp-server", "--nodes", "10.1.2.3:7000"}, env);
  CHECK(front.status.describe() == "exit code 2");
  CHECK(contains(front.err, "not on this machine"));
}

namespace {

// A CA and two certificates it signed (EC keys: quick to make), in `dir`.
void make_certificates(const std::string& dir, const std::string& ca, const std::vector<std::string>& names) {
  auto sh = [](const std::string& cmd) {
    SpawnOptions o;
    o.argv = {"/bin/sh", "-c", cmd};
    ChildProcess p(std::move(o));
    p.close_stdin();
    auto status = p.wait(30s);
    INFO(cmd << "\n" << p.stderr_so_far());
    REQUIRE(status.describe() == "exit code 0");
  };
  const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ";
  sh("cd '" + dir + "' && openssl req -x509" + ec + "-keyout " + ca + ".key -out " + ca + ".pem -days 2 -subj /CN=" +
     ca + " 2>&1");
  for (const auto& n : names)
    sh("cd '" + dir + "' && openssl req" + ec + "-keyout " + n + ".key -out " + n + ".csr -subj /CN=127.0.0.1 && " +
       "openssl x509 -req -in " + n + ".csr -CA " + ca + ".pem -CAkey " + ca + ".key -CAcreateserial -out " + n +
       ".pem -days 2 2>&1");
}

std::vector<std::string> tls_config(const std::string& dir, const std::string& name, const std::string& ca) {
  return {"-c", "cluster.cert=\"" + dir + "/" + name + ".pem\"", "-c", "cluster.key=\"" + dir + "/" + name + ".key\"",
          "-c", "cluster.cafile=\"" + dir + "/" + ca + ".pem\""};
}

}  // namespace

TEST_CASE("cluster: over TLS a front with a certificate of the node's CA is served, others are not") {
  TempDir home{"llmx-cluster"};
  TempDir certs{"llmx-certs"};
  MockLlm mock;
  make_certificates(certs.path(), "ca", {"node", "front"});
  make_certificates(certs.path(), "otherca", {"stranger"});
  NodeProcess node(home.path(), mock.url(),
                   {"--cert", certs.file("node.pem"), "--key", certs.file("node.key"), "--cafile", certs.file("ca.pem")});
  {
    McpOptions o;
    o.args = {"--nodes", node.address()};
    for (auto& a : tls_config(certs.path(), "front", "ca")) o.args.push_back(a);
    McpClient mcp(home.path(), mock.url(), o);
    mcp.initialize();
    auto resp = mcp.wait_for_response(mcp.call_llmx("@mock:echo over tls"), 30s);
    INFO(mcp.diagnostics());
    CHECK(result_text(resp) == "echo: over tls");
  }
  // Plain TCP to a TLS node, or a certificate from another CA: never attached.
  for (auto extra : {std::vector<std::string>{}, tls_config(certs.path(), "stranger", "otherca")}) {
    McpOptions o;
    o.args = {"--nodes", node.address()};
    o.args.insert(o.args.end(), extra.begin(), extra.end());
    McpClient mcp(home.path(), mock.url(), o);
    mcp.initialize();
    auto resp = mcp.wait_for_response(mcp.call_llmx("@mock:echo should not run"), 30s);
    CHECK(result_is_error(resp));
    CHECK_MESSAGE(contains(result_text(resp), "no worker node is attached"), result_text(resp));
  }
  CHECK(node.process().running());
  // A partial TLS setup is a usage error.
  auto partial = run_llmx({"node", "--cert", certs.file("node.pem")}, llmx_env(home.path(), mock.url()));
  CHECK(partial.status.describe() == "exit code 2");
  CHECK(contains(partial.err, "--cert, --key and --cafile"));
}

TEST_CASE("cluster: a front that dies takes its conversations on the node with it, and the node serves the next front") {
  Cluster c(1);
  const auto marker = unique_sleep(40);
  {
    McpClient mcp(c.home.path(), c.mock.url(), c.front({"-c", "sandbox_mode=\"danger-full-access\""}));
    mcp.initialize();
    mcp.call_llmx("@mock:shell cmd=" + marker[0] + " " + marker[1]);
    REQUIRE(wait_until_running(marker, 1, 20s));
    mcp.process().kill(SIGKILL);
    // The node sees the front's store go away: the conversation shuts down, its command is killed.
    CHECK(wait_until_no_process(marker, 20s));
  }
  CHECK(c.nodes[0]->process().running());
  McpClient next(c.home.path(), c.mock.url(), c.front());
  next.initialize();
  auto resp = next.wait_for_response(next.call_llmx("@mock:echo next front"), 20s);
  CHECK(result_text(resp) == "echo: next front");
}

TEST_CASE("cluster: with every node gone a reply ends with a clear error instead of waiting, and works once one is back") {
  Cluster c(1);
  McpClient mcp(c.home.path(), c.mock.url(), c.front());
  mcp.initialize();
  auto first = mcp.wait_for_response(mcp.call_llmx("@mock:echo remember me"), 20s);
  REQUIRE_FALSE(result_is_error(first));
  const auto thread = first.str("/result/structuredContent/threadId");
  const auto port = c.nodes[0]->port();
  c.nodes[0]->process().kill(SIGKILL);
  c.nodes[0]->process().wait();
  auto reply = mcp.wait_for_response(mcp.call_reply(thread, "@mock:echo anyone there"), 20s);
  CHECK(result_is_error(reply));
  // The front may learn of the loss before the reply (no node to resume on) or while forwarding it.
  CHECK_MESSAGE((contains(result_text(reply), "no worker node is attached") || contains(result_text(reply), "was lost")),
                result_text(reply));
  // A node on the same port: the front re-attaches, and the thread resumes with its history.
  NodeProcess back(c.home.path(), c.mock.url(), {"--listen", "127.0.0.1:" + std::to_string(port)});
  std::string answer;
  for (int i = 0; i < 50 && answer != "echo: again"; ++i) {
    answer = result_text(mcp.wait_for_response(mcp.call_reply(thread, "@mock:echo again"), 20s));
    if (answer != "echo: again") std::this_thread::sleep_for(200ms);
  }
  CHECK(answer == "echo: again");
  CHECK(contains(recorded_requests(c.mock).text("/requests"), "remember me"));
}

TEST_CASE("cluster: a copy of llmx without its network module serves alone and says why it cannot reach a node") {
  // The engine loads CAF's middleman from llmx-network.so beside the binary only when it needs a
  // node. (The engine itself, llmx-engine.so, is copied along.)
  TempDir home("llmx-netmod-home"), bin("llmx-netmod-bin");
  const std::string copy = bin.path() + "/llmx";
  const auto built = fs::path(llmx_binary()).parent_path();
  for (const auto& [from, to] : {std::pair{fs::path(llmx_binary()), fs::path(copy)},
                                 std::pair{built / "llmx-engine.so", fs::path(bin.path()) / "llmx-engine.so"}}) {
    std::error_code ec;
    fs::create_hard_link(from, to, ec);
    if (ec) fs::copy_file(from, to);
  }
  auto env = llmx_env(home.path(), "http://127.0.0.1:9/v1");
  auto alone = run_llmx_at(copy, {"mcp-server"}, env);
  CHECK(alone.status.describe() == "exit code 0");
  auto node = run_llmx_at(copy, {"node", "--listen", "127.0.0.1:0"}, env);
  CHECK(node.status.describe() == "exit code 1");
  CHECK(contains(node.err, "cannot load llmx's network module"));
  CHECK(contains(node.err, bin.path() + "/llmx-network.so"));
  auto front = run_llmx_at(copy, {"mcp-server", "--nodes", "127.0.0.1:1"}, env);
  CHECK(front.status.describe() == "exit code 1");
  CHECK(contains(front.err, "cannot load llmx's network module"));
}
