#include "actors/exec_sandbox.hpp"

#include "sandbox/process.hpp"

namespace llmx {

namespace {

// Runs on the process loop thread: forwards output and the end, never blocks.
class Handler : public sandbox::ProcessHandler {
 public:
  Handler(std::string call_id, turn_executor_actor sink, exec_sandbox_actor owner)
      : call_id_(std::move(call_id)), sink_(std::move(sink)), owner_(std::move(owner)) {}
  void on_output(sandbox::Stream stream, std::string_view bytes) override {
    caf::anon_send(sink_, ExecOutput{call_id_, stream == sandbox::Stream::err, std::string(bytes)});
  }
  void on_exit(sandbox::ExecResult r) override {
    ExecDone d;
    d.call_id = call_id_;
    d.exit_code = r.exit_code;
    d.signal = r.signal;
    d.timed_out = r.timed_out;
    d.killed = r.killed;
    d.stdout_text = std::move(r.stdout_text);
    d.stderr_text = std::move(r.stderr_text);
    d.aggregated = std::move(r.aggregated);
    d.duration_ns = static_cast<uint64_t>(r.duration.count());
    d.spawn_error = std::move(r.spawn_error);
    caf::anon_send(owner_, std::move(d));
  }

 private:
  std::string call_id_;
  turn_executor_actor sink_;
  exec_sandbox_actor owner_;
};

struct Running {
  uint64_t process_id = 0;
  caf::typed_response_promise<ExecDone> promise;
};

struct ExecState {
  ExecState() = default;
  // Whatever ends this actor (the task finished or was interrupted), no child outlives it.
  ~ExecState() {
    for (auto& [_, r] : running) sandbox::shared_process_loop().kill(r.process_id);
  }
  turn_executor_actor sink;
  std::map<std::string, Running> running;  // by call id
  static inline const char* name = "llmx.exec_sandbox";
};

using exec_ptr = exec_sandbox_actor::stateful_pointer<ExecState>;

exec_sandbox_actor::behavior_type exec_impl(exec_ptr self, turn_executor_actor sink) {
  self->state.sink = std::move(sink);
  return {
      [=](ExecRequest& req) -> caf::result<ExecDone> {
        sandbox::SpawnRequest spawn;
        spawn.argv = std::move(req.argv);
        spawn.cwd = std::move(req.cwd);
        spawn.env = std::move(req.env);
        spawn.sandbox = std::move(req.sandbox);
        spawn.sandbox_cwd = std::move(req.sandbox_cwd);
        spawn.timeout_ms = req.timeout_ms;
        if (req.max_capture_bytes) spawn.max_capture_bytes = static_cast<size_t>(*req.max_capture_bytes);
        spawn.sandbox_options.allow_git_writes = req.allow_git_writes;
        spawn.sandbox_options.llmx_home = std::move(req.llmx_home);
        if (req.fallback_approved)
          spawn.sandbox_options.fallback = sandbox::SandboxFallback::unsandboxed_with_approval;
        auto promise = self->make_response_promise<ExecDone>();
        auto handler = std::make_shared<Handler>(req.call_id, self->state.sink,
                                                 caf::actor_cast<exec_sandbox_actor>(self));
        auto id = sandbox::shared_process_loop().spawn(std::move(spawn), std::move(handler));
        self->state.running[req.call_id] = Running{id, promise};
        return promise;
      },
      [=](ExecDone& done) {
        auto it = self->state.running.find(done.call_id);
        if (it == self->state.running.end()) return;
        it->second.promise.deliver(std::move(done));
        self->state.running.erase(it);
      },
      [=](cancel_atom) {
        for (auto& [_, r] : self->state.running) sandbox::shared_process_loop().kill(r.process_id);
      },
  };
}

}  // namespace

exec_sandbox_actor spawn_exec_sandbox(caf::local_actor* parent, turn_executor_actor output_sink) {
  return parent->spawn<caf::linked>(exec_impl, std::move(output_sink));
}

}  // namespace llmx
