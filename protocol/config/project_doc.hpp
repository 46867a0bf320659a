// AGENTS.md loading (engine.md §1.4): the global doc from the llmx home, the project docs from the
// git root down to the cwd, and their combination into the user-instructions message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmx::project_doc {

// The first directory from `dir` upwards holding `.git` (file or directory); the filesystem root
// itself is never tested. nullopt outside a repository.
std::optional<std::string> find_git_root(const std::string& dir);

// For a linked worktree (`.git` is a file `gitdir: <main>/.git/worktrees/<name>`), the main
// repository's root; nullopt for an ordinary repository or anything unreadable.
std::optional<std::string> main_repository_root(const std::string& git_root);

// Names tried in each directory: AGENTS.override.md, AGENTS.md, then the fallbacks trimmed, with
// blanks and duplicates dropped.
std::vector<std::string> candidate_names(const std::vector<std::string>& fallbacks);

// The directories searched, root first: git root … cwd, or just cwd outside a repository.
std::vector<std::string> search_dirs(const std::string& cwd);

// The doc chosen in each search directory (the first candidate that exists as a regular file
// or a symlink), in reading order.
std::vector<std::string> discover(const std::string& cwd, const std::vector<std::string>& fallbacks);

// The trimmed contents of the first of `<home>/AGENTS.override.md`, `<home>/AGENTS.md` that is
// non-empty after trimming.
std::optional<std::string> read_global(const std::string& home);

// The project docs joined with "\n\n": each file read up to the remaining `max_bytes` budget
// (truncated silently), decoded as UTF-8 with invalid bytes replaced by U+FFFD, not trimmed;
// whitespace-only files are skipped and use no budget. nullopt when max_bytes is 0 or nothing
// was found.
std::optional<std::string> read_project_docs(const std::string& cwd, int64_t max_bytes,
                                             const std::vector<std::string>& fallbacks);

// Global and project docs combined: `global + "\n\n--- project-doc ---\n\n" + project` when both
// exist, else whichever exists.
std::optional<std::string> user_instructions(const std::string& home, const std::string& cwd, int64_t max_bytes,
                                             const std::vector<std::string>& fallbacks);

// The text of the user message carrying them (engine.md §1.3).
std::string instructions_message(const std::string& cwd, const std::string& instructions);

// `bytes` as valid UTF-8: each invalid or truncated sequence becomes U+FFFD.
std::string utf8_lossy(std::string_view bytes);

}  // namespace llmx::project_doc
