// Unit tests for the child environment policy (engine.md §4.6) and its glob matcher.
#include "sandbox/exec_env.hpp"

#include <doctest/doctest.h>

#include <cstdlib>

#include "protocol/base/secret_env.hpp"

using namespace llmx::sandbox;
using llmx::has_url_credentials;

namespace {

EnvMap parent_env() {
  return {{"HOME", "/home/u"},        {"PATH", "/usr/bin:/bin"}, {"USER", "u"},
          {"LLMX_API_KEY", "sk-1"},   {"GITHUB_TOKEN", "ghp"},   {"my_secret_thing", "s"},
          {"AWS_ACCESS_KEY_ID", "a"}, {"EDITOR", "vi"},          {"LANG", "C.UTF-8"},
          {"TERM", "xterm"},          {"TMPDIR", "/var/tmp"}};
}

}  // namespace

TEST_CASE("exec_env: glob matching is case-insensitive with * and ?") {
  CHECK(glob_match_icase("*KEY*", "LLMX_API_KEY"));
  CHECK(glob_match_icase("*key*", "LLMX_API_KEY"));
  CHECK(glob_match_icase("*KEY*", "keychain"));
  CHECK(glob_match_icase("*KEY*", "KEY"));
  CHECK_FALSE(glob_match_icase("*KEY*", "KE_Y"));
  CHECK(glob_match_icase("A?C", "abc"));
  CHECK_FALSE(glob_match_icase("A?C", "ac"));
  CHECK_FALSE(glob_match_icase("A?C", "abbc"));
  CHECK(glob_match_icase("*", ""));
  CHECK(glob_match_icase("", ""));
  CHECK_FALSE(glob_match_icase("", "x"));
  CHECK(glob_match_icase("PATH", "path"));
  CHECK_FALSE(glob_match_icase("PATH", "PATHX"));
  CHECK(glob_match_icase("*_ID", "AWS_ACCESS_KEY_ID"));
  CHECK(glob_match_icase("a*b*c", "aXXbYYbZc"));
  CHECK_FALSE(glob_match_icase("a*b*c", "aXXbYYbZ"));
  CHECK(glob_match_icase("**?", "x"));
  CHECK_FALSE(glob_match_icase("**?", ""));
}

TEST_CASE("exec_env: inherit=all drops *KEY*, *SECRET*, *TOKEN* by default") {
  ShellEnvironmentPolicy p;
  EnvMap env = build_child_env(p, parent_env(), false);
  CHECK(env.count("HOME"));
  CHECK(env.count("EDITOR"));
  CHECK(env.count("LANG"));
  CHECK_FALSE(env.count("LLMX_API_KEY"));
  CHECK_FALSE(env.count("GITHUB_TOKEN"));
  CHECK_FALSE(env.count("my_secret_thing"));
  CHECK_FALSE(env.count("AWS_ACCESS_KEY_ID"));
  CHECK_FALSE(env.count("LLMX_SANDBOX_NETWORK_DISABLED"));
  CHECK(env.size() == 7);
}

TEST_CASE("exec_env: ignore_default_excludes keeps secrets") {
  ShellEnvironmentPolicy p;
  p.ignore_default_excludes = true;
  EnvMap env = build_child_env(p, parent_env(), false);
  CHECK(env == parent_env());
}

TEST_CASE("exec_env: inherit=core keeps only the core variables") {
  ShellEnvironmentPolicy p;
  p.inherit = "core";
  EnvMap env = build_child_env(p, parent_env(), false);
  CHECK(env ==
        EnvMap{
            {"HOME", "/home/u"}, {"PATH", "/usr/bin:/bin"}, {"USER", "u"}, {"TMPDIR", "/var/tmp"}});
}

TEST_CASE("exec_env: inherit=none starts empty, set still applies") {
  ShellEnvironmentPolicy p;
  p.inherit = "none";
  p.set = {{"FOO", "bar"}};
  CHECK(build_child_env(p, parent_env(), false) == EnvMap{{"FOO", "bar"}});
}

TEST_CASE("exec_env: exclude globs, then set overrides, then include_only filters") {
  ShellEnvironmentPolicy p;
  p.exclude = {"ed*", "LAN?"};
  p.set = {{"HOME", "/override"}, {"NEW_VAR", "1"}, {"MY_TOKEN", "explicit"}};
  EnvMap env = build_child_env(p, parent_env(), false);
  CHECK_FALSE(env.count("EDITOR"));
  CHECK_FALSE(env.count("LANG"));
  CHECK(env.at("HOME") == "/override");
  CHECK(env.at("NEW_VAR") == "1");
  // `set` comes after the default excludes, so an explicitly set secret survives.
  CHECK(env.at("MY_TOKEN") == "explicit");

  p.include_only = {"home", "N*"};
  env = build_child_env(p, parent_env(), false);
  CHECK(env == EnvMap{{"HOME", "/override"}, {"NEW_VAR", "1"}});
}

TEST_CASE("exec_env: network-restricted policies add LLMX_SANDBOX_NETWORK_DISABLED=1 last") {
  ShellEnvironmentPolicy p;
  p.include_only = {"PATH"};
  EnvMap env = build_child_env(p, parent_env(), true);
  CHECK(env == EnvMap{{"PATH", "/usr/bin:/bin"}, {"LLMX_SANDBOX_NETWORK_DISABLED", "1"}});
}

TEST_CASE("exec_env: current_process_env reads environ") {
  ::setenv("LLMX_EXEC_ENV_TEST_VAR", "a=b", 1);
  EnvMap env = current_process_env();
  CHECK(env.at("LLMX_EXEC_ENV_TEST_VAR") == "a=b");
  ::unsetenv("LLMX_EXEC_ENV_TEST_VAR");
}

TEST_CASE("exec_env: passwords, credentials and URLs with a password are dropped by default") {
  EnvMap parent = {{"MY_PASSWORD", "hunter2"},
                   {"db_passwd", "x"},
                   {"GPG_PASSPHRASE", "x"},
                   {"GOOGLE_APPLICATION_CREDENTIALS", "/k.json"},
                   {"DATABASE_URL", "postgres://user:secret@db.example:5432/app"},
                   {"PROXY", "http://u:p@proxy:3128 http://other"},
                   {"REPO_URL", "ssh://git@example.org/repo.git"},  // a user, no password
                   {"HOMEPAGE", "https://example.org/a:b@c"},       // '@' only in the path
                   {"PATH", "/bin"}};
  auto env = build_child_env({}, parent, false);
  CHECK(env == EnvMap{{"REPO_URL", "ssh://git@example.org/repo.git"},
                      {"HOMEPAGE", "https://example.org/a:b@c"},
                      {"PATH", "/bin"}});
  CHECK(has_url_credentials("mysql://root:pw@localhost/db"));
  CHECK(has_url_credentials("x=1;redis://:pw@cache:6379"));
  CHECK_FALSE(has_url_credentials("https://example.org/"));
  CHECK_FALSE(has_url_credentials("user:pw@host"));  // not a URL
  ShellEnvironmentPolicy keep;
  keep.ignore_default_excludes = true;
  CHECK(build_child_env(keep, parent, false).size() == parent.size());
}
