#include "exec_command.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "actors/engine.hpp"
#include "actors/rollout_store.hpp"
#include "protocol/base/files.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/rpc/exec_events.hpp"
#include "protocol/rpc/exec_human.hpp"
#include "protocol/workspace/git_info.hpp"
#include "termination.hpp"
#include "transport/curl_api.hpp"

namespace llmx::cli {

namespace {
void out(std::string_view s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}
void err(std::string_view s) {
  if (s.empty()) return;
  std::fwrite(s.data(), 1, s.size(), stderr);
  std::fflush(stderr);
}
// `--color auto`: a terminal that shows colours, unless the user opted out (no-color.org).
bool colour_terminal() {
  if (!::isatty(STDERR_FILENO)) return false;
  if (const char* no = std::getenv("NO_COLOR"); no && *no) return false;
  const char* term = std::getenv("TERM");
  return !(term && std::string_view(term) == "dumb");
}
}  // namespace

int run_exec(const ExecOptions& options) {
  Config cfg;
  try {
    cfg = load_config(options.overrides);
  } catch (const std::exception& err) {
    fmt::print(stderr, "error: {}\n", err.what());
    return 1;
  }
  for (const auto& w : cfg.warnings) fmt::print(stderr, "warning: {}\n", w);
  std::error_code cwd_ec;
  if (!std::filesystem::is_directory(cfg.cwd, cwd_ec)) {
    fmt::print(stderr, "error: the working directory {} does not exist or is not a directory\n", cfg.cwd);
    return 1;
  }
  // As the reference: an agent let loose outside version control has nothing to undo with.
  if (!options.skip_git_repo_check && !inside_git_repository(cfg.cwd)) {
    fmt::print(stderr,
               "error: {} is not inside a git repository, and --skip-git-repo-check was not given. Run llmx exec "
               "from a repository, or pass --skip-git-repo-check to run here anyway.\n",
               cfg.cwd);
    return 1;
  }
  cfg.session_source = "exec";
  if (!options.thread_source.empty()) cfg.thread_source = options.thread_source;
  if (!options.cyber_access_program.empty()) {
    // Only the Responses wire has the field; a Chat request would silently drop the choice.
    if (cfg.provider.wire_api == WireApi::chat) {
      fmt::print(stderr,
                 "error: --cyber-access-program is not supported with provider `{}`: it speaks the Chat "
                 "Completions wire, and only the Responses API carries an access program\n",
                 cfg.provider.id);
      return 2;
    }
    cfg.cyber_access_program = options.cyber_access_program;
  }
  cfg.interactive_approvals = false;
  for (const auto& dir : options.add_dirs) {
    std::error_code ec;
    auto abs = std::filesystem::absolute(dir, ec).lexically_normal().string();
    cfg.sandbox_policy.writable_roots.push_back(ec ? dir : abs);
  }
  if (!options.output_schema.empty()) {
    auto text = files::read(options.output_schema);
    if (!text) {
      fmt::print(stderr, "error: cannot read the output schema {}\n", options.output_schema);
      return 1;
    }
    try {
      json::Parser p;
      auto root = p.parse(*text);
      if (!root.is_object()) throw json::DecodeError("a JSON Schema is an object");
      cfg.output_schema = RawJson{json::to_text(root)};
    } catch (const json::DecodeError& e) {
      fmt::print(stderr, "error: the output schema {} is not a JSON Schema: {}\n", options.output_schema, e.what());
      return 1;
    }
  }
  std::vector<UserInput> input{TextInput{options.prompt}};
  for (const auto& image : options.images) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(image, ec)) {
      fmt::print(stderr, "error: cannot read image {}: not a readable file\n", image);
      return 1;
    }
    if (!image_type(image)) {
      fmt::print(stderr, "error: cannot read image {}: not a PNG, JPEG, GIF or WebP file of at most 20 MiB\n", image);
      return 1;
    }
    std::error_code abs_ec;
    input.push_back(LocalImageInput{std::filesystem::absolute(image, abs_ec).string()});
  }
  http::preload_curl_async();
  TerminationSignals signals;  // before the actor system: its threads inherit the block
  caf::actor_system_config sys_cfg;
  configure_system(sys_cfg);
  caf::actor_system sys{sys_cfg};
  auto engine = start_engine(sys);
  int code = 1;
  {
    caf::scoped_actor self{sys};
    // A signal interrupts the turn like a client's interrupt: the turn is aborted and recorded. One
    // that came before the handler was installed reaches it at once.
    signals.on_signal([me = caf::actor_cast<caf::actor>(self)](int) { caf::anon_send(me, interrupt_atom::value); });
    std::optional<conversation_actor> conv;
    bool interrupted = false;
    std::string failure;
    const bool machine = options.json || options.core_events;  // stdout carries JSON lines only
    exec_events::Translator translator;
    std::vector<std::string> lines;
    exec_human::Printer human(options.color == "always" || (options.color == "auto" && colour_terminal()));
    auto print = [&](const Event& ev) {
      if (options.core_events) return out(json::to_json(ev) + "\n");
      if (!options.json) {  // people: progress on stderr, the answer alone on stdout (at the end)
        if (auto* sc = ev.msg.get_if<SessionConfiguredEvent>())
          return err(human.header({LLMX_VERSION, sc->model, cfg.provider.id, cfg.cwd,
                                   std::string(enum_name(cfg.sandbox_policy.mode)),
                                   std::string(enum_name(cfg.approval_policy))},
                                  sc->session_id));
        return err(human.on(ev));
      }
      lines.clear();
      translator.translate(ev, lines);
      for (auto& l : lines) out(l + "\n");
    };
    auto on_started = [&](conversation_actor c, SessionConfiguredEvent sc) {
      conv = c;
      print(Event{"", sc});
    };
    auto on_error = [&](caf::error& err) { failure = error_text(err); };
    // The provider's model list first (bounded; the table stands in after that): a one-shot turn
    // starts at once, so it would otherwise know only the built-in table's windows and limits.
    // A server's clients have it by the time their user has typed.
    self->request(engine.models, caf::infinite, ModelsQuery{cfg.provider, 3000, false})
        .receive([](models::ModelCatalog&) {}, [](caf::error&) {});
    if (options.resume_id || options.resume_last) {
      ResumeThread req{cfg, ThreadRef{cfg.llmx_home, options.resume_id, {}}, {}};
      if (options.resume_last) {
        ListThreads newest;
        newest.home = cfg.llmx_home;
        newest.query.page_size = 1;
        self->request(engine.store, caf::infinite, newest)
            .receive(
                [&](ThreadPage& tp) {
                  auto& page = tp.page;
                  if (page.items.empty())
                    failure = "no stored conversation to resume";
                  else
                    req.ref.path = page.items.front().path;
                },
                on_error);
      }
      if (failure.empty()) self->request(engine.manager, caf::infinite, resume_atom::value, req).receive(on_started, on_error);
    } else {
      self->request(engine.manager, caf::infinite, new_conv_atom::value, cfg).receive(on_started, on_error);
    }
    if (conv) {
      self->send(*conv, subscribe_atom::value, caf::actor_cast<event_sink_actor>(self));
      self->send(*conv, submit_atom::value, Submission{"", UserInputOp{std::move(input)}});
      bool done = false;
      std::string last_message;
      self->receive_while([&] { return !done; })(
          [&](ConversationEvents& batch) {
            for (const auto& ev : batch.events) {
              const auto& msg = ev.msg;
              print(ev);
              if (auto* e = msg.get_if<ErrorEvent>()) {
                failure = e->message;
              } else if (auto* tc = msg.get_if<TaskCompleteEvent>()) {
                if (tc->last_agent_message) last_message = *tc->last_agent_message;
                done = true;
              } else if (auto* a = msg.get_if<TurnAbortedEvent>()) {
                failure = "turn aborted: " + std::string(enum_name(a->reason));
                done = true;
              }
            }
          },
          [&](const std::string&) {},  // the submission id reply
          [&](interrupt_atom) {
            if (interrupted) return;
            interrupted = true;
            self->send(*conv, submit_atom::value, Submission{"", InterruptOp{}});
          });
      // A failed or interrupted turn has no final answer: its last message may be one said on
      // the way ("Running a command."), so stdout and the --output-last-message file stay as
      // they were (as the reference does).
      const bool answered = failure.empty() && !interrupted;
      if (!machine && answered && !last_message.empty()) out(last_message + "\n");
      code = failure.empty() ? 0 : 1;
      if (answered && !options.output_last_message.empty()) {
        std::ofstream file(options.output_last_message, std::ios::binary | std::ios::trunc);
        file << last_message;
        if (!file) {
          fmt::print(stderr, "error: cannot write {}\n", options.output_last_message);
          code = 1;
        }
      }
    }
    if (!failure.empty()) fmt::print(stderr, "error: {}\n", failure);
    self->request(engine.manager, std::chrono::seconds(5), shutdown_atom::value).receive([](bool) {}, [](caf::error&) {});
    signals.on_signal(nullptr);
  }
  if (int sig = signals.received()) code = 128 + sig;
  http::finish_preload();
  return code;
}

}  // namespace llmx::cli
