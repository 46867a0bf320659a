#include "protocol/rpc/v2_threads.hpp"

#include <algorithm>

#include "protocol/rpc/conversation_api.hpp"
#include "protocol/store/rollout.hpp"

namespace llmx::v2 {

ConfigOverrides start_overrides(const ThreadStartParams& p) {
  ConfigOverrides o;
  if (p.model) o.model = *p.model;
  if (p.modelProvider) o.model_provider = *p.modelProvider;
  if (p.cwd) o.cwd = *p.cwd;
  if (p.approvalPolicy) o.approval_policy = to_core(*p.approvalPolicy);
  if (p.sandbox) o.sandbox_mode = to_core(*p.sandbox);
  if (p.baseInstructions) o.base_instructions = *p.baseInstructions;
  if (p.developerInstructions) o.developer_instructions = *p.developerInstructions;
  if (p.config) o.json_overrides = api::dotted_overrides(*p.config);
  return o;
}

ThreadOpenedResult opened_result(const Config& cfg) {
  ThreadOpenedResult r;
  r.model = cfg.model;
  r.modelProvider = cfg.provider.id;
  r.cwd = cfg.cwd;
  r.approvalPolicy = from_core(cfg.approval_policy);
  r.sandbox = cfg.sandbox_policy;
  if (cfg.reasoning_effort) r.reasoningEffort = *cfg.reasoning_effort;
  return r;
}

Thread new_thread(const std::string& id, const Config& cfg, const std::string& rollout_path, int64_t now_unix) {
  Thread t;
  t.id = id;
  t.modelProvider = cfg.provider.id;
  t.createdAt = t.updatedAt = now_unix;
  t.status.type = "idle";
  if (!rollout_path.empty()) t.path = rollout_path;
  t.cwd = cfg.cwd;
  t.cliVersion = std::string(rollout::kCliVersion);
  t.source = RawJson{"\"vscode\""};
  return t;
}

void mark_running(Thread& t, const std::string& running_turn) {
  if (running_turn.empty()) {
    t.status = ThreadStatus{"idle", std::nullopt};
    return;
  }
  t.status = ThreadStatus{"active", std::vector<std::string>{}};
  if (!t.turns.empty()) {
    t.turns.back().id = running_turn;
    t.turns.back().status = TurnStatus::in_progress;
  }
}

ThreadLoadedListResult loaded_page(std::vector<std::string> ids, const Nullable<std::string>& cursor,
                                   const Nullable<int64_t>& limit) {
  std::sort(ids.begin(), ids.end());
  auto begin = ids.begin();
  if (cursor) begin = std::upper_bound(ids.begin(), ids.end(), *cursor);
  size_t left = static_cast<size_t>(ids.end() - begin);
  size_t n = limit ? static_cast<size_t>(std::max<int64_t>(1, *limit)) : left;
  ThreadLoadedListResult r;
  r.data.assign(begin, begin + static_cast<std::ptrdiff_t>(std::min(n, left)));
  if (n < left) r.nextCursor = r.data.back();
  return r;
}

}  // namespace llmx::v2
