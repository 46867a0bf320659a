#include "protocol/rpc/mcp_tasks.hpp"

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>

#include "protocol/base/crypto.hpp"
#include "protocol/store/rollout.hpp"

namespace llmx::mcp {

std::string_view task_status_name(TaskStatus s) {
  switch (s) {
    case TaskStatus::working: return "working";
    case TaskStatus::input_required: return "input_required";
    case TaskStatus::completed: return "completed";
    case TaskStatus::failed: return "failed";
    case TaskStatus::cancelled: return "cancelled";
  }
  return "working";
}

std::string new_task_id() {
  unsigned char b[16];
  crypto::random_bytes(b, sizeof b);
  b[6] = (b[6] & 0x0F) | 0x40;  // version 4
  b[8] = (b[8] & 0x3F) | 0x80;  // RFC 4122 variant
  return fmt::format("{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                     b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                     b[15]);
}

TaskView view_of(const Task& t, std::chrono::milliseconds poll_interval) {
  TaskView v;
  v.id = t.id;
  v.status = std::string(task_status_name(t.status));
  v.status_message = t.status_message;
  v.created_at = rollout::format_timestamp(t.created);
  v.updated_at = rollout::format_timestamp(t.updated);
  v.ttl_ms = t.ttl.count();
  v.poll_ms = is_terminal(t.status) ? 0 : poll_interval.count();
  if (t.outcome) {
    v.result = t.outcome->result;
    v.result_is_error = t.outcome->is_error;
  }
  return v;
}

namespace {

// The fields both revisions share; they differ in the names of ttl and poll interval.
void task_fields(json::Writer& w, const TaskView& t, std::string_view ttl_key, std::string_view poll_key) {
  w.field("taskId", t.id);
  w.field("status", t.status);
  if (t.status_message) w.field("statusMessage", *t.status_message);
  w.field("createdAt", t.created_at);
  w.field("lastUpdatedAt", t.updated_at);
  w.field(ttl_key, t.ttl_ms);
  if (t.poll_ms > 0) w.field(poll_key, t.poll_ms);
}

}  // namespace

std::string task_2025(const TaskView& t) {
  json::Writer w;
  w.begin_object();
  task_fields(w, t, "ttl", "pollInterval");
  w.end_object();
  return w.take();
}

std::string create_task_2025(const TaskView& t) {
  json::Writer w;
  w.begin_object().key("task").raw(task_2025(t)).end_object();
  return w.take();
}

std::string task_result_2025(const TaskView& t) {
  json::Writer w;
  w.begin_object().key(kRelatedTaskKey).begin_object().field("taskId", t.id).end_object().end_object();
  return with_meta(t.result.value_or("{}"), w.take());
}

std::string task_list_2025(const TaskPage& page) {
  json::Writer w;
  w.begin_object().key("tasks").begin_array();
  for (const auto& t : page.tasks) w.raw(task_2025(t));
  w.end_array();
  if (page.next_cursor) w.field("nextCursor", *page.next_cursor);
  w.end_object();
  return w.take();
}

std::string create_task_2026(const TaskView& t) {
  json::Writer w;
  w.begin_object();
  w.field("resultType", "task");
  task_fields(w, t, "ttlMs", "pollIntervalMs");
  w.end_object();
  return stateless_result(w.take());
}

std::string task_get_2026(const TaskView& t) {
  json::Writer w;
  w.begin_object();
  w.field("resultType", "complete");
  // The extension's `failed` is a JSON-RPC error only; a tool's error result is `completed`.
  TaskView shown = t;
  if (t.status == "failed" && t.result) shown.status = "completed";
  task_fields(w, shown, "ttlMs", "pollIntervalMs");
  if (shown.status == "input_required") {
    w.key("inputRequests").begin_object();
    for (const auto& q : t.questions)
      w.key(q.key).begin_object().field("method", "elicitation/create").key("params").raw(q.params).end_object();
    w.end_object();
  } else if (shown.status == "completed" && t.result) {
    w.key("result").raw(stateless_result(*t.result));
  }
  w.end_object();
  return stateless_result(w.take());
}

namespace {
int64_t millis(TaskBook::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::optional<std::pair<int64_t, uint64_t>> parse_cursor(std::string_view c) {
  auto dot = c.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  int64_t ms = 0;
  uint64_t seq = 0;
  auto a = std::from_chars(c.data(), c.data() + dot, ms);
  auto b = std::from_chars(c.data() + dot + 1, c.data() + c.size(), seq);
  if (a.ec != std::errc{} || a.ptr != c.data() + dot || b.ec != std::errc{} || b.ptr != c.data() + c.size())
    return std::nullopt;
  return std::pair{ms, seq};
}
}  // namespace

Task& TaskBook::create(const std::string& owner, std::optional<int64_t> requested_ttl_ms, Clock::time_point now,
                       bool stateless) {
  auto ttl = requested_ttl_ms ? std::chrono::milliseconds(*requested_ttl_ms) : limits_.default_ttl;
  ttl = std::clamp(ttl, limits_.min_ttl, limits_.max_ttl);
  Task t;
  t.id = new_task_id();
  t.owner = owner;
  t.stateless = stateless;
  t.created = t.updated = now;
  t.ttl = ttl;
  auto key = std::pair{millis(now), ++sequence_};
  order_[key] = t.id;
  order_of_[t.id] = key;
  auto id = t.id;
  return tasks_[id] = std::move(t);
}

Task* TaskBook::find(const std::string& id, const std::string& owner) {
  auto it = tasks_.find(id);
  if (it == tasks_.end() || it->second.owner != owner) return nullptr;
  return &it->second;
}

Task* TaskBook::get(const std::string& id) {
  auto it = tasks_.find(id);
  return it == tasks_.end() ? nullptr : &it->second;
}

void TaskBook::erase(const std::string& id) {
  if (!tasks_.erase(id)) return;
  order_.erase(order_of_.at(id));
  order_of_.erase(id);
}

bool TaskBook::update(Task& t, TaskStatus status, Clock::time_point now, std::optional<std::string> message) {
  if (is_terminal(t.status)) return false;
  t.status = status;
  t.status_message = std::move(message);
  t.updated = now;
  if (is_terminal(status)) t.ended = now;
  return true;
}

void TaskBook::finish(Task& t, Task::Outcome outcome, Clock::time_point now, std::optional<std::string> message) {
  if (t.outcome) return;
  bool is_error = outcome.is_error;
  t.outcome = std::move(outcome);
  update(t, is_error ? TaskStatus::failed : TaskStatus::completed, now, std::move(message));
  if (!t.ended) t.ended = now;
}

std::optional<TaskBook::Page> TaskBook::list(const std::string& owner, const std::optional<std::string>& cursor) const {
  auto it = order_.begin();
  if (cursor) {
    auto key = parse_cursor(*cursor);
    if (!key) return std::nullopt;
    it = order_.upper_bound(*key);
  }
  Page page;
  for (; it != order_.end(); ++it) {
    const auto& t = tasks_.at(it->second);
    if (t.owner != owner || t.stateless) continue;
    if (page.tasks.size() == limits_.page_size) {
      auto last = order_of_.at(page.tasks.back()->id);
      page.next_cursor = fmt::format("{}.{}", last.first, last.second);
      break;
    }
    page.tasks.push_back(&t);
  }
  return page;
}

std::vector<std::string> TaskBook::expire(Clock::time_point now) {
  std::vector<std::string> gone;
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    const auto& t = it->second;
    if (t.ended && now >= std::max(t.created + t.ttl, *t.ended + limits_.grace)) {
      gone.push_back(it->first);
      order_.erase(order_of_.at(it->first));
      order_of_.erase(it->first);
      it = tasks_.erase(it);
    } else {
      ++it;
    }
  }
  return gone;
}

}  // namespace llmx::mcp
