// MCP tasks as plain code (2025-11-25 `tasks/*`; the 2026-07-28 extension
// `io.modelcontextprotocol/tasks` reads the same book): a long tool call — an agent turn — is
// answered at once with a task the client polls. The book keeps each task's status, times, ttl,
// owner and outcome, pages the listing, and says which tasks have expired. The actor that runs
// the turns (actors/mcp_task_board.cpp) only feeds it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/base/json_writer.hpp"
#include "protocol/base/reflect.hpp"
#include "protocol/rpc/mcp.hpp"

namespace llmx::mcp {

enum class TaskStatus { working, input_required, completed, failed, cancelled };
std::string_view task_status_name(TaskStatus s);
inline bool is_terminal(TaskStatus s) {
  return s == TaskStatus::completed || s == TaskStatus::failed || s == TaskStatus::cancelled;
}

// The `_meta` key that ties a message to its task (2025-11-25).
inline constexpr std::string_view kRelatedTaskKey = "io.modelcontextprotocol/related-task";
// The 2026-07-28 tasks extension's id (capabilities.extensions).
inline constexpr std::string_view kTasksExtension = "io.modelcontextprotocol/tasks";

// tasks/get, tasks/result, tasks/cancel params (the TypeScript SDK also repeats `task`: ignored).
struct TaskIdParams {
  std::string taskId;
  LLMX_FIELDS(v("taskId", s.taskId))
};

struct TaskListParams {
  std::optional<std::string> cursor;
  LLMX_FIELDS(v("cursor", s.cursor))
};

// An unguessable task id (128 random bits from the system's CSPRNG, as a UUID v4): ids are the
// only key to a task a client that cannot be identified holds.
std::string new_task_id();

struct Task {
  using Clock = std::chrono::system_clock;
  struct Outcome {
    std::string result;  // the CallToolResult (JSON object)
    bool is_error = false;
  };
  std::string id;
  std::string owner;  // who may see it (an auth principal; "" when clients are not told apart)
  bool stateless = false;  // made by a 2026-07-28 request (the 2025 methods do not see it)
  TaskStatus status = TaskStatus::working;
  std::optional<std::string> status_message;
  Clock::time_point created, updated;
  std::chrono::milliseconds ttl{0};
  std::optional<Clock::time_point> ended;
  std::optional<Outcome> outcome;  // once terminal (a cancelled task says so as an error result)
};

// One question a task waits on: its key and the elicitation/create params (JSON).
struct TaskQuestion {
  std::string key;
  std::string params;
  LLMX_FIELDS(v("key", s.key); v("params", s.params))
};

// A task as the board shows it to a session, whatever the revision it speaks.
struct TaskView {
  std::string id;
  std::string status;  // task_status_name
  std::optional<std::string> status_message;
  std::string created_at, updated_at;  // ISO 8601 UTC
  int64_t ttl_ms = 0;
  int64_t poll_ms = 0;
  std::optional<std::string> result;  // the CallToolResult (JSON object), once ended
  bool result_is_error = false;
  std::vector<TaskQuestion> questions;  // outstanding, while input_required
  LLMX_FIELDS(v("id", s.id); v("status", s.status); v("status_message", s.status_message);
              v("created_at", s.created_at); v("updated_at", s.updated_at); v("ttl_ms", s.ttl_ms);
              v("poll_ms", s.poll_ms); v("result", s.result); v("result_is_error", s.result_is_error);
              v("questions", s.questions))
  bool terminal() const { return status == "completed" || status == "failed" || status == "cancelled"; }
};
TaskView view_of(const Task& t, std::chrono::milliseconds poll_interval);

// A page of tasks/list.
struct TaskPage {
  std::vector<TaskView> tasks;
  std::optional<std::string> next_cursor;
  LLMX_FIELDS(v("tasks", s.tasks); v("next_cursor", s.next_cursor))
};

// --- 2025-11-25 -----------------------------------------------------------------------------------
// The `Task` object (tasks/get, tasks/cancel, notifications/tasks/status params).
std::string task_2025(const TaskView& t);
// CreateTaskResult: `{"task": Task}`.
std::string create_task_2025(const TaskView& t);
// tasks/result: the call's result tagged with its task.
std::string task_result_2025(const TaskView& t);
// tasks/list: `{"tasks": [...], "nextCursor"?}`.
std::string task_list_2025(const TaskPage& page);

// --- 2026-07-28 tasks extension -------------------------------------------------------------------
// A flat CreateTaskResult (`resultType: "task"`).
std::string create_task_2026(const TaskView& t);
// tasks/get: the DetailedTask (`inputRequests` while input_required, `result` once completed,
// `error` once failed), `resultType: "complete"`.
std::string task_get_2026(const TaskView& t);

class TaskBook {
 public:
  using Clock = Task::Clock;
  struct Limits {
    std::chrono::milliseconds default_ttl{std::chrono::hours(1)};
    std::chrono::milliseconds min_ttl{std::chrono::minutes(1)};
    std::chrono::milliseconds max_ttl{std::chrono::hours(24)};
    // How long an ended task stays at least (one that ran past its ttl, too).
    std::chrono::milliseconds grace{std::chrono::minutes(1)};
    std::chrono::milliseconds poll_interval{std::chrono::milliseconds(500)};
    size_t page_size = 50;
  };
  TaskBook() = default;
  explicit TaskBook(Limits limits) : limits_(limits) {}

  // A new working task; the ttl the client asked for is kept within the limits.
  Task& create(const std::string& owner, std::optional<int64_t> requested_ttl_ms, Clock::time_point now,
               bool stateless = false);
  // The task, when it exists and `owner` may see it.
  Task* find(const std::string& id, const std::string& owner);
  // The task, whoever owns it (for the runner that feeds the book).
  Task* get(const std::string& id);
  // Forgets a task that never ran (its turn was refused).
  void erase(const std::string& id);
  // Moves a task to `status` (terminal statuses never change again: false then).
  bool update(Task& t, TaskStatus status, Clock::time_point now, std::optional<std::string> message = std::nullopt);
  // Ends a task with its outcome (completed, or failed for an error result, whose text
  // `message` says why); a task cancelled before keeps its status and outcome.
  void finish(Task& t, Task::Outcome outcome, Clock::time_point now, std::optional<std::string> message = std::nullopt);

  struct Page {
    std::vector<const Task*> tasks;  // oldest first
    std::optional<std::string> next_cursor;
  };
  // One page of `owner`'s 2025 tasks; nullopt for a cursor this book did not give.
  std::optional<Page> list(const std::string& owner, const std::optional<std::string>& cursor) const;

  // Forgets the tasks whose time is up: terminal ones past their ttl and at least `grace` after
  // they ended (a running task is never dropped under its turn). Returns their ids.
  std::vector<std::string> expire(Clock::time_point now);

  const Limits& limits() const { return limits_; }
  size_t size() const { return tasks_.size(); }

 private:
  Limits limits_;
  std::map<std::string, Task> tasks_;               // by id
  std::map<std::pair<int64_t, uint64_t>, std::string> order_;  // (created ms, sequence) -> id
  std::map<std::string, std::pair<int64_t, uint64_t>> order_of_;
  uint64_t sequence_ = 0;
};

}  // namespace llmx::mcp
