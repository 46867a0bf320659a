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

namespace llmx::mcp {

enum class TaskStatus { working, input_required, completed, failed, cancelled };
std::string_view task_status_name(TaskStatus s);
inline bool is_terminal(TaskStatus s) {
  return s == TaskStatus::completed || s == TaskStatus::failed || s == TaskStatus::cancelled;
}

// The `_meta` key that ties a message to its task (2025-11-25).
inline constexpr std::string_view kRelatedTaskKey = "io.modelcontextprotocol/related-task";

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
  std::string id;
  std::string owner;  // who may see it (an auth principal; "" when clients are not told apart)
  TaskStatus status = TaskStatus::working;
  std::optional<std::string> status_message;
  Clock::time_point created, updated;
  std::chrono::milliseconds ttl{0};
  std::optional<Clock::time_point> ended;
  // The outcome once terminal: the tasks/result answer (JSON).
  std::optional<std::string> result;
};

// The Task object's fields (2025-11-25 `Task`), written into an open object.
void write_task_fields(json::Writer& w, const Task& t, std::chrono::milliseconds poll_interval);

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
  Task& create(const std::string& owner, std::optional<int64_t> requested_ttl_ms, Clock::time_point now);
  // The task, when it exists and `owner` may see it.
  Task* find(const std::string& id, const std::string& owner);
  // The task, whoever owns it (for the runner that feeds the book).
  Task* get(const std::string& id);
  // Moves a task to `status` (terminal statuses never change again: false then).
  bool update(Task& t, TaskStatus status, Clock::time_point now, std::optional<std::string> message = std::nullopt);
  // Ends a task with its outcome, the answer tasks/result gives (completed, or failed for an
  // error result); a task cancelled before keeps its status and outcome.
  void finish(Task& t, std::string result, bool is_error, Clock::time_point now);

  struct Page {
    std::vector<const Task*> tasks;  // oldest first
    std::optional<std::string> next_cursor;
  };
  // One page of `owner`'s tasks; nullopt for a cursor this book did not give.
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
