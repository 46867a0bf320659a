// The timer paths, deterministically: CAF's test coordinator runs the actors on this thread and
// its clock only moves when the test says so (no wall-clock sleeps). The approval timeout of the
// broker, the backoff before a model request is retried, and the streamer's idle timeout.
#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>

#include "actors/approval_broker.hpp"
#include "test/support/loopback.hpp"
#include "actors/message_list.hpp"
#include "actors/model_streamer.hpp"
#include "actors/turn_executor.hpp"
#include "transport/http_client.hpp"

using namespace llmx;
using namespace std::chrono_literals;

namespace {

struct TestSystem {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;

  TestSystem() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.file-verbosity", caf::atom("quiet"));
    add_message_types(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    sched->clock().current_time += std::chrono::hours(1);
  }
  ~TestSystem() {
    // The HTTP loop is the process's and outlives this system: let every transfer a streamer
    // started end first, so no handler reports to an actor of a system that is gone.
    run_until([] { return http::Client::shared().active() == 0; });
    sched->run();
  }

  void run() { sched->run(); }
  // Moves the clock and runs what that released.
  void advance(caf::timespan t) {
    sched->advance_time(t);
    sched->run();
  }
  // For messages that come from another thread (the HTTP loop): runs until `done`, bounded.
  template <class Pred>
  bool run_until(Pred done) {
    for (int i = 0; i < 2000 && !done(); ++i) {
      if (!sched->try_run_once()) std::this_thread::sleep_for(5ms);
    }
    return done();
  }
};

// What a fake turn executor was told.
struct ExecutorLog {
  std::vector<std::string> retrying;
  std::vector<std::string> failed;
};

turn_executor_actor fake_executor(caf::actor_system& sys, std::shared_ptr<ExecutorLog> log) {
  auto a = sys.spawn([log](caf::event_based_actor*) -> caf::behavior {
    return {
        [log](ModelEvents&) {},
        [log](ModelRetrying& r) { log->retrying.push_back(r.message); },
        [log](ModelFailed& f) { log->failed.push_back(f.message); },
    };
  });
  return caf::actor_cast<turn_executor_actor>(a);
}

// What a fake conversation heard from its task.
struct ConversationLog {
  std::vector<std::string> errors;
  bool done = false;
};

conversation_actor fake_conversation(caf::actor_system& sys, std::shared_ptr<ConversationLog> log) {
  auto a = sys.spawn([log](caf::event_based_actor*) -> caf::behavior {
    return {
        [log](TurnEvents& batch) {
          for (const auto& ev : batch.events)
            if (auto* e = ev.msg.get_if<ErrorEvent>()) log->errors.push_back(e->message);
        },
        [](RecordItems&) {},
        [log](TaskDone&) { log->done = true; },
    };
  });
  return caf::actor_cast<conversation_actor>(a);
}

// A loopback port that accepts connections and never answers.
struct SilentServer {
  int fd = -1;
  int port = 0;
  SilentServer() {
    auto l = llmx::test::listen_on_loopback(16);
    fd = l.fd;
    port = l.port;
  }
  ~SilentServer() { ::close(fd); }
};

// A loopback port nobody listens on (connections are refused).
int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

ModelRequest request_to(int port) {
  ModelRequest req;
  req.seq = 1;
  req.provider.id = "test";
  req.provider.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  req.provider.experimental_bearer_token = "t";
  req.call_id_prefix = "call";
  req.user_agent = "llmx-test";
  return req;
}

// An actor that spawns a child with `spawn_child(self)`. The child (a streamer, an executor) is
// linked to it: the test keeps the parent for as long as the child should live, and its exit
// kills the child, as a crash of the child's real parent would.
template <class F>
[[nodiscard]] caf::actor parent_of(caf::actor_system& sys, F spawn_child) {
  return sys.spawn([=](caf::event_based_actor* self) -> caf::behavior {
    spawn_child(self);
    return {[](int) {}};
  });
}

[[nodiscard]] caf::actor start_streamer(caf::actor_system& sys, turn_executor_actor executor, ModelRequest req) {
  return parent_of(sys, [=](caf::event_based_actor* self) { spawn_model_streamer(self, executor, req); });
}

}  // namespace

TEST_CASE("timers: an unanswered approval request is denied exactly when approval_timeout passes") {
  TestSystem t;
  auto asked = std::make_shared<int>(0);
  auto conversation = caf::actor_cast<conversation_actor>(t.sys->spawn([asked](caf::event_based_actor*) -> caf::behavior {
    return {[asked](TurnEvents&) { ++*asked; }};
  }));
  auto reply = std::make_shared<std::optional<ApprovalReply>>();
  t.sys->spawn([=](caf::event_based_actor* self) -> caf::behavior {
    auto broker = spawn_approval_broker(self, conversation, 30000);
    ApprovalRequest req;
    req.call_id = "c1";
    req.sub_id = "s";
    req.event = ExecApprovalRequestEvent{};
    self->request(broker, caf::infinite, req).then([=](ApprovalReply& r) { *reply = r; });
    return {[](int) {}};
  });
  t.run();
  CHECK(*asked == 1);  // the request event went to the conversation
  CHECK_FALSE(*reply);
  t.advance(29999ms);
  CHECK_FALSE(*reply);  // not a moment early
  t.advance(1ms);
  REQUIRE(*reply);
  CHECK((*reply)->decision == ReviewDecision::denied);
  CHECK((*reply)->note == "no answer to the approval request within 30 s; treated as denied");
}

TEST_CASE("timers: a refused model request is retried after its backoff, not before, then given up") {
  TestSystem t;
  auto log = std::make_shared<ExecutorLog>();
  auto req = request_to(closed_port());
  req.provider.request_max_retries = 1;
  auto parent = start_streamer(*t.sys, fake_executor(*t.sys, log), req);
  // The refusal comes from the HTTP loop thread; the retry waits on the (test) clock.
  REQUIRE(t.run_until([&] { return log->retrying.size() == 1; }));
  CHECK(log->retrying[0].starts_with("Reconnecting... 1/1"));
  // The next timer is the retry: 200 ms +- 10% from now (the stale idle check comes far later).
  auto& clock = t.sched->clock();
  REQUIRE_FALSE(clock.schedule().empty());
  auto wait = clock.schedule().begin()->first - clock.now();
  CHECK(wait >= 180ms);
  CHECK(wait <= 220ms);
  t.advance(179ms);
  CHECK(log->failed.empty());
  t.advance(41ms);
  REQUIRE(t.run_until([&] { return !log->failed.empty(); }));
  CHECK(log->failed[0].find("exceeded retry limit: 1 retries") != std::string::npos);
}

TEST_CASE("timers: a stream that stays silent for stream_idle_timeout is cut off, not earlier") {
  TestSystem t;
  SilentServer silent;
  auto log = std::make_shared<ExecutorLog>();
  auto req = request_to(silent.port);
  req.provider.stream_idle_timeout_ms = 5000;
  req.provider.stream_max_retries = 0;
  auto parent = start_streamer(*t.sys, fake_executor(*t.sys, log), req);
  t.run();
  t.advance(4999ms);
  CHECK(log->failed.empty());
  t.advance(1ms);
  REQUIRE(log->failed.size() == 1);
  CHECK(log->failed[0] == "stream disconnected before completion: idle timeout waiting for SSE");
}

TEST_CASE("timers: the approval timeout counts from each request, not from an earlier one for the same call") {
  TestSystem t;
  auto conversation = caf::actor_cast<conversation_actor>(
      t.sys->spawn([](caf::event_based_actor*) -> caf::behavior { return {[](TurnEvents&) {}}; }));
  auto replies = std::make_shared<std::vector<ApprovalReply>>();
  // Asks the broker about call c1 whenever it gets an int.
  auto asker = t.sys->spawn([=](caf::event_based_actor* self) -> caf::behavior {
    auto broker = spawn_approval_broker(self, conversation, 30000);
    return {[=](int) {
      ApprovalRequest req;
      req.call_id = "c1";
      req.event = ExecApprovalRequestEvent{};
      self->request(broker, caf::infinite, req).then([=](ApprovalReply& r) { replies->push_back(r); });
    }};
  });
  caf::anon_send(asker, 1);
  t.run();
  t.advance(20s);
  caf::anon_send(asker, 2);  // the same call asks again: the first request is superseded
  t.run();
  REQUIRE(replies->size() == 1);
  CHECK((*replies)[0].note == "superseded by a newer request");
  t.advance(10s);  // 30 s after the first request: the second still waits
  CHECK(replies->size() == 1);
  t.advance(20s);  // 30 s after the second
  REQUIRE(replies->size() == 2);
  CHECK((*replies)[1].decision == ReviewDecision::denied);
  CHECK((*replies)[1].note.find("within 30 s") != std::string::npos);
}

// A turn executor and the parent it is linked to (see parent_of).
struct Task {
  caf::actor parent;
  turn_executor_actor executor;
};

Task spawn_task(TestSystem& t, conversation_actor conversation) {
  auto executor = std::make_shared<turn_executor_actor>();
  auto parent = parent_of(*t.sys, [=](caf::event_based_actor* self) {
    *executor = spawn_turn_executor(self, conversation, {}, {}, {});
  });
  t.run();
  return {parent, *executor};
}

// A task whose model never answers; the stream is cut after 5 s and not retried.
TaskSpec silent_task(int port) {
  TaskSpec spec;
  spec.conversation_id = "conv";
  spec.sub_id = "sub";
  spec.config.cwd = "/tmp";
  spec.config.model = "test-model";
  spec.config.approval_policy = AskForApproval::never;
  spec.config.sandbox_policy.mode = SandboxMode::danger_full_access;
  spec.config.provider = request_to(port).provider;
  spec.config.provider.stream_idle_timeout_ms = 5000;
  spec.config.provider.stream_max_retries = 0;
  spec.input = {TextInput{"hello"}};
  return spec;
}

// The clients fall behind as a task starts and catch up before its stream has run: the stream
// hears "pause" and then "read on". Sent at different priorities, "read on" overtook "pause" and
// the stream stayed paused for good, its idle check put off forever: a turn that never ended.
TEST_CASE("timers: a stream paused at its start and resumed before it ran still times out") {
  TestSystem t;
  SilentServer silent;
  auto log = std::make_shared<ConversationLog>();
  auto task = spawn_task(t, fake_conversation(*t.sys, log));
  // As the conversation starts a task for clients that are behind.
  caf::anon_send(task.executor, start_atom::value, silent_task(silent.port));
  caf::anon_send<caf::message_priority::high>(task.executor, pause_atom::value, true);
  // The executor alone: it starts the stream, which has not run yet.
  auto* job = dynamic_cast<caf::resumable*>(caf::actor_cast<caf::abstract_actor*>(task.executor));
  auto executor_only = [job](caf::resumable* r) { return r == job; };
  REQUIRE(t.sched->run_jobs_filtered(executor_only) > 0);
  // The clients caught up: the executor tells the stream before the stream ran at all.
  caf::anon_send<caf::message_priority::high>(task.executor, pause_atom::value, false);
  REQUIRE(t.sched->run_jobs_filtered(executor_only) > 0);
  t.run();
  t.advance(5000ms);
  CHECK(log->done);
  CHECK(log->errors == std::vector<std::string>{"stream disconnected before completion: idle timeout waiting for SSE"});
  caf::anon_send_exit(task.parent, caf::exit_reason::user_shutdown);  // and its executor, if still running
  t.run();
}

// A task killed mid-stream (its conversation crashed, say) takes its stream along: the transfer
// is cancelled instead of waiting on the provider for no one.
TEST_CASE("timers: a task that is killed cancels its model stream's transfer") {
  TestSystem t;
  SilentServer silent;
  auto log = std::make_shared<ConversationLog>();
  REQUIRE(t.run_until([] { return http::Client::shared().active() == 0; }));
  auto task = spawn_task(t, fake_conversation(*t.sys, log));
  caf::anon_send(task.executor, start_atom::value, silent_task(silent.port));
  t.run();
  REQUIRE(http::Client::shared().active() == 1);  // the stream waits on the silent server
  caf::anon_send_exit(task.parent, caf::exit_reason::user_shutdown);
  t.run();
  CHECK(t.run_until([] { return http::Client::shared().active() == 0; }));
  CHECK_FALSE(log->done);  // killed, not ended: nothing was said for it
}
