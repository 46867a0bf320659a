// Embedding llmx in a host CAF program (actors/engine.hpp): the host owns the actor system
// config and the actor system, starts the engine in it, and drives one conversation with typed
// messages only — no JSON anywhere. With `--node LLMX_BIN` the same host connects to a worker
// node (`llmx node`) through start_cluster_engine instead, as the fronts do (issue 15), and a
// node refuses an attach that claims another llmx version. Exit code 0 = pass.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "test/support/scratch_home.hpp"
#include "actors/engine.hpp"
#include "actors/refusal.hpp"
#include "test/support/child_process.hpp"

using namespace std::chrono_literals;

namespace {

int failures = 0;

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (false)

// The host's own subscriber: a typed event sink that hands every event to a listener actor
// (here the scoped actor driving the test) and counts them.
struct SinkState {
  llmx::event_sink_actor listener;
  size_t received = 0;
  static inline const char* name = "host.event_sink";
};

llmx::event_sink_actor::behavior_type forwarding_sink(llmx::event_sink_actor::stateful_pointer<SinkState> self,
                                                      llmx::event_sink_actor listener) {
  self->state.listener = std::move(listener);
  return {
      [=](llmx::ConversationEvents& batch) {
        self->state.received += batch.events.size();
        self->send(self->state.listener, std::move(batch));
      },
  };
}

constexpr const char* kExpected = "Hello from mock-llm. This is a streamed answer.";

// A raw attach with another version: the node must refuse it with a clear error.
void check_version_refused(caf::actor_system& sys, const llmx::NodeAddress& at, const llmx::Engine& engine) {
  auto node = sys.middleman().remote_actor<llmx::node_actor>(at.host, at.port);
  EXPECT(static_cast<bool>(node));
  if (!node) return;
  caf::scoped_actor self{sys};
  std::string refusal;
  llmx::NodeAttach hello{"0.0.0-elsewhere", caf::actor_cast<caf::strong_actor_ptr>(engine.store)};
  self->request(*node, 10s, llmx::attach_atom::value, hello)
      .receive([&](llmx::NodeAttached&) { refusal = "(accepted)"; },
               [&](caf::error& err) { refusal = llmx::error_text(err); });
  if (refusal.find("versions differ") == std::string::npos) std::fprintf(stderr, "attach with another version: %s\n", refusal.c_str());
  EXPECT(refusal.find("versions differ") != std::string::npos);
  EXPECT(refusal.find("0.0.0-elsewhere") != std::string::npos);
}

int run(const char* node_bin) {
  // The model: mock-llm on a free port (it exits with us: stdin EOF and parent-death signal).
  llmx::test::ChildProcess mock({.argv = {MOCK_LLM_BIN, "--exit-on-stdin-eof"}});
  auto url = mock.read_line();
  if (!url || url->rfind("http://", 0) != 0) {
    std::fprintf(stderr, "mock-llm did not print its URL; stderr: %s\n", mock.stderr_so_far().c_str());
    return 1;
  }
  char home_tmpl[] = "/tmp/llmx-embed-XXXXXX";
  if (!::mkdtemp(home_tmpl)) return 1;
  const std::string home = home_tmpl;
  ::setenv("LLMX_HOME", home.c_str(), 1);
  ::setenv("LLMX_BASE_URL", url->c_str(), 1);
  ::setenv("LLMX_API_KEY", "test", 1);
  ::setenv("LLMX_STREAM_WINDOW", "64", 1);

  // A worker node, when asked for: the conversation runs there, the rollout stays here.
  std::unique_ptr<llmx::test::ChildProcess> node_process;
  std::optional<llmx::NodeAddress> node_address;
  if (node_bin) {
    node_process = std::make_unique<llmx::test::ChildProcess>(llmx::test::SpawnOptions{
        .argv = {node_bin, "node", "--exit-on-stdin-eof", "--listen", "127.0.0.1:0"}});
    auto line = node_process->read_line();
    if (!line || line->rfind("listening ", 0) != 0) {
      std::fprintf(stderr, "llmx node did not start; stderr: %s\n", node_process->stderr_so_far().c_str());
      return 1;
    }
    node_address = llmx::parse_node_address(line->substr(10));
    EXPECT(node_address.has_value());
    if (!node_address) return 1;
  }
  {
    // The host's configuration and actor system; llmx only registers its message types (and
    // loads the middleman to reach a node).
    caf::actor_system_config cfg;
    llmx::add_message_types(cfg);
    if (node_bin) llmx::configure_network(cfg, {});
    cfg.set("logger.verbosity", caf::atom("quiet"));
    caf::actor_system sys{cfg};
    auto engine = node_bin ? llmx::start_cluster_engine(sys, {{*node_address}}) : llmx::start_engine(sys);
    if (node_bin) check_version_refused(sys, *node_address, engine);
    {
      caf::scoped_actor self{sys};
      llmx::Config config = llmx::load_config({});
      EXPECT(config.provider.base_url == *url);

      std::optional<llmx::conversation_actor> conv;
      llmx::SessionConfiguredEvent configured;
      self->request(engine.manager, 10s, llmx::new_conv_atom::value, config)
          .receive(
              [&](llmx::conversation_actor c, llmx::SessionConfiguredEvent sc) {
                conv = std::move(c);
                configured = std::move(sc);
              },
              [&](caf::error& err) { std::fprintf(stderr, "new conversation failed: %s\n", sys.render(err).c_str()); });
      if (!conv) return 1;
      EXPECT(configured.session_id.size() == 36);
      EXPECT(configured.model == config.model);

      // Find the same conversation by id.
      bool found = false;
      self->request(engine.manager, 10s, llmx::find_conv_atom::value, configured.session_id)
          .receive([&](llmx::conversation_actor c) { found = c == *conv; }, [&](caf::error&) {});
      EXPECT(found);

      auto sink = sys.spawn(forwarding_sink, caf::actor_cast<llmx::event_sink_actor>(self));
      self->send(*conv, llmx::subscribe_atom::value, sink);

      std::string sub_id;
      self->request(*conv, 10s, llmx::submit_atom::value, llmx::text_submission("@mock:text deltas=5", "host-1"))
          .receive([&](const std::string& id) { sub_id = id; },
                   [&](caf::error& err) { std::fprintf(stderr, "submit failed: %s\n", sys.render(err).c_str()); });
      EXPECT(sub_id == "host-1");

      // Typed events until task_complete (bounded: 10 s of silence fails the test).
      std::vector<std::string> kinds;
      std::string deltas;
      size_t delta_count = 0;
      std::optional<std::string> last_message;
      bool done = false, timed_out = false;
      self->receive_while([&] { return !done && !timed_out; })(
          [&](llmx::ConversationEvents& batch) {
            EXPECT(batch.conversation_id == configured.session_id);
            EXPECT(!batch.events.empty());
            for (const auto& ev : batch.events) {
              EXPECT(ev.id == sub_id);
              const auto& msg = ev.msg;
              kinds.emplace_back(msg.kind());
              if (auto* d = msg.get_if<llmx::AgentMessageDeltaEvent>()) {
                deltas += d->delta;
                ++delta_count;
              } else if (auto* c = msg.get_if<llmx::TaskCompleteEvent>()) {
                last_message = c->last_agent_message;
                done = true;
              } else if (auto* e = msg.get_if<llmx::ErrorEvent>()) {
                std::fprintf(stderr, "error event: %s\n", e->message.c_str());
                ++failures;
              }
            }
          },
          caf::after(10s) >> [&] {
            std::fprintf(stderr, "timed out waiting for events (got %zu)\n", kinds.size());
            timed_out = true;
          });
      EXPECT(done);
      EXPECT(!kinds.empty() && kinds.front() == "task_started");
      EXPECT(!kinds.empty() && kinds.back() == "task_complete");
      EXPECT(delta_count == 5);
      EXPECT(deltas == kExpected);
      EXPECT(last_message && *last_message == kExpected);

      // A manual compaction (the `compact` op) runs as its own task and replaces the history.
      std::vector<std::string> compact_kinds;
      bool compact_done = false, compact_reported = false;
      std::optional<std::string> compact_last{"unset"};
      self->send(*conv, llmx::submit_atom::value, llmx::Submission{"host-2", llmx::CompactOp{}});
      self->receive_while([&] { return !compact_done && !timed_out; })(
          [&](llmx::ConversationEvents& batch) {
            for (const auto& ev : batch.events) {
              compact_kinds.emplace_back(ev.msg.kind());
              if (auto* m = ev.msg.get_if<llmx::AgentMessageEvent>())
                compact_reported = compact_reported || m->message == "Compact task completed";
              if (auto* c = ev.msg.get_if<llmx::TaskCompleteEvent>()) {
                compact_last = c->last_agent_message;
                compact_done = true;
              }
            }
          },
          [&](const std::string&) {},
          caf::after(10s) >> [&] { timed_out = true; });
      EXPECT(compact_done);
      EXPECT(compact_reported);
      EXPECT(!compact_kinds.empty() && compact_kinds.front() == "task_started");
      EXPECT(!compact_last.has_value());  // a compact task has no last agent message

      // A host that has not handled its events holds the model stream back (the delivery
      // window, LLMX_STREAM_WINDOW=64 below): while the listener does not read, only about one
      // network read of a 2,000-delta answer reaches its mailbox; then the rest follows, in
      // order. A node's events leave their process serialised, so there the window is the
      // node's own, and the bound is not checked.
      self->send(*conv, llmx::submit_atom::value, llmx::text_submission("@mock:text deltas=2000", "host-3"));
      std::this_thread::sleep_for(1s);
      size_t held_deltas = 0;
      bool held_done = false, drained = false;
      auto count = [&](llmx::ConversationEvents& batch) {
        for (const auto& ev : batch.events) {
          if (ev.msg.is<llmx::AgentMessageDeltaEvent>()) ++held_deltas;
          if (ev.msg.is<llmx::TaskCompleteEvent>()) held_done = true;
        }
      };
      // What waits in the mailbox after 1 s, without the listener having read any of it.
      self->receive_while([&] { return !drained; })(count, [&](const std::string&) {},
                                                     caf::after(0s) >> [&] { drained = true; });
      const size_t early = held_deltas;
      self->receive_while([&] { return !held_done && !timed_out; })(count, [&](const std::string&) {},
                                                                     caf::after(10s) >> [&] { timed_out = true; });
      EXPECT(held_done);
      EXPECT(held_deltas == 2000);
      if (!node_bin) {
        if (early > 1000) std::fprintf(stderr, "%zu of 2000 deltas reached a host that did not read\n", early);
        EXPECT(early <= 1000);
      }

      // Conversations nobody spoke in: the shutdown does not wait for them, but they end right
      // after its reply even though the host still holds their handles.
      std::vector<llmx::conversation_actor> idle;
      for (int i = 0; i < 3; ++i)
        self->request(engine.manager, 10s, llmx::new_conv_atom::value, config)
            .receive([&](llmx::conversation_actor c, llmx::SessionConfiguredEvent&) { idle.push_back(std::move(c)); },
                     [&](caf::error& err) { std::fprintf(stderr, "idle conversation failed: %s\n", sys.render(err).c_str()); });
      EXPECT(idle.size() == 3);
      for (const auto& c : idle) self->monitor(c);

      // The engine shuts down on request; then the host's own actors.
      bool shut = false;
      self->request(engine.manager, 10s, llmx::shutdown_atom::value)
          .receive([&](bool) { shut = true; }, [&](caf::error& err) {
            std::fprintf(stderr, "shutdown failed: %s\n", sys.render(err).c_str());
          });
      EXPECT(shut);
      size_t ended = 0;
      bool waited_out = false;
      self->receive_while([&] { return ended < idle.size() && !waited_out; })(
          [&](caf::down_msg&) { ++ended; }, [&](llmx::ConversationEvents&) {},
          caf::after(10s) >> [&] { waited_out = true; });
      if (ended != idle.size()) std::fprintf(stderr, "%zu of %zu idle conversations ended\n", ended, idle.size());
      EXPECT(ended == idle.size());
      if (node_bin) {
        // The cluster engine answers once its store is down, so the host may destroy its actor
        // system at once; a store still ending then could hang ~actor_system (cluster.cpp).
        bool store_answered = false;
        self->request(engine.store, 2s, llmx::ListThreads{home, {}})
            .receive([&](llmx::ThreadPage&) { store_answered = true; }, [&](caf::error&) {});
        EXPECT(!store_answered);
      }
      self->send_exit(sink, caf::exit_reason::user_shutdown);
      // Shutdown wrote every line: the rollout holds the task and the compaction.
      std::ifstream in(configured.rollout_path);
      std::string rollout((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      EXPECT(rollout.find("\"type\":\"session_meta\"") != std::string::npos);
      EXPECT(rollout.find("\"type\":\"compacted\"") != std::string::npos);
      EXPECT(rollout.find(kExpected) != std::string::npos);
    }
    // ~actor_system waits for every actor: a leaked engine actor would hang here (the alarm
    // in main turns that into a failure).
  }
  std::error_code ec;
  std::filesystem::remove_all(home, ec);
  if (node_process) node_process->terminate();
  mock.terminate();
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  llmx::test::ScratchHome home;  // no command of the test reads the user's profile
  ::alarm(60);  // never hang: SIGALRM ends the process with a failure status
  const char* node_bin = argc == 3 && std::string(argv[1]) == "--node" ? argv[2] : nullptr;
  int rc = 1;
  try {
    rc = run(node_bin);
  } catch (const std::exception& err) {
    std::fprintf(stderr, "exception: %s\n", err.what());
    rc = 1;
  }
  std::fprintf(stderr, "%s (%d failed checks)\n", rc == 0 ? "PASS" : "FAIL", failures);
  return rc;
}
