// Unit tests for comment-preserving TOML edits (protocol/config/toml_edit.hpp) and the config.toml
// writers built on them (protocol/config/config_write.hpp): every byte outside the edit stays as it was.
#include "protocol/config/toml_edit.hpp"

#include <sys/stat.h>

#include <doctest/doctest.h>

#include "protocol/config/config_write.hpp"
#include "test/support/unit_temp_dir.hpp"

using namespace llmx;
using namespace llmx::toml_edit;
using llmx::test::ScratchDir;

namespace {

const std::string kDoc = R"(# llmx settings
model = "old"   # the default
approval_policy = "never"

# fast things
[profiles.fast]
model = "fast-old" # keep
# a trailing note

[tui]
notifications = true
)";

}  // namespace

TEST_CASE("toml_edit: replacing a value changes only its bytes") {
  auto out = set_value(kDoc, "model", quote("new"));
  std::string expected = kDoc;
  expected.replace(expected.find("\"old\""), 5, "\"new\"");
  CHECK(out == expected);
  out = set_value(kDoc, "profiles.fast.model", quote("fast-new"));
  expected = kDoc;
  expected.replace(expected.find("\"fast-old\""), 10, "\"fast-new\"");
  CHECK(out == expected);
  // Another type is fine too.
  CHECK(set_value(kDoc, "tui.notifications", "false") == kDoc.substr(0, kDoc.size() - 5) + "false\n");
}

TEST_CASE("toml_edit: a new top-level key goes after the last top-level key") {
  auto out = set_value(kDoc, "model_reasoning_effort", quote("high"));
  std::string expected = kDoc;
  expected.insert(expected.find("\n\n# fast things") + 1, "model_reasoning_effort = \"high\"\n");
  CHECK(out == expected);
}

TEST_CASE("toml_edit: a new key in an existing table goes after its last key line") {
  auto out = set_value(kDoc, "profiles.fast.model_reasoning_effort", quote("low"));
  std::string expected = kDoc;
  expected.insert(expected.find("# a trailing note"), "model_reasoning_effort = \"low\"\n");
  CHECK(out == expected);
  out = set_value(kDoc, "tui.animations", "false");
  CHECK(out == kDoc + "animations = false\n");
}

TEST_CASE("toml_edit: a key of a missing table creates the table at the end") {
  CHECK(set_value(kDoc, "profiles.slow.model", quote("s")) == kDoc + "\n[profiles.slow]\nmodel = \"s\"\n");
  CHECK(set_value(kDoc, "history.persistence", quote("none")) == kDoc + "\n[history]\npersistence = \"none\"\n");
  // Without a trailing newline, one is added first.
  CHECK(set_value("a = 1", "t.b", "2") == "a = 1\n\n[t]\nb = 2\n");
  CHECK(set_value("", "t.b", "2") == "[t]\nb = 2\n");
}

TEST_CASE("toml_edit: top-level keys in files without any") {
  CHECK(set_value("", "model", quote("m")) == "model = \"m\"\n");
  CHECK(set_value("# only a comment\n", "model", quote("m")) == "# only a comment\nmodel = \"m\"\n");
  CHECK(set_value("# header\n\n# about t\n[t]\nx = 1\n", "model", quote("m")) ==
        "# header\n\nmodel = \"m\"\n\n# about t\n[t]\nx = 1\n");
}

TEST_CASE("toml_edit: removing a value removes its line only") {
  auto out = remove_value(kDoc, "model");
  std::string expected = kDoc;
  expected.erase(expected.find("model = \"old\""), std::string("model = \"old\"   # the default\n").size());
  CHECK(out == expected);
  CHECK(remove_value(kDoc, "nothing.here") == kDoc);
  CHECK(remove_value(kDoc, "profiles.fast.model_reasoning_effort") == kDoc);
}

TEST_CASE("toml_edit: inline tables") {
  std::string doc = "tui = { notifications = true }  # ui\nenv = {}\n";
  CHECK(set_value(doc, "tui.notifications", "false") == "tui = { notifications = false }  # ui\nenv = {}\n");
  CHECK(set_value(doc, "tui.x", "1") == "tui = { notifications = true, x = 1 }  # ui\nenv = {}\n");
  CHECK(set_value(doc, "env.K", quote("v")) == "tui = { notifications = true }  # ui\nenv = { K = \"v\" }\n");
  CHECK(remove_value("t = { a = 1, b = 2, c = 3 }\n", "t.b") == "t = { a = 1, c = 3 }\n");
  CHECK(remove_value("t = { a = 1, b = 2 }\n", "t.b") == "t = { a = 1 }\n");
  CHECK(remove_value("t = { a = 1, b = 2 }\n", "t.a") == "t = { b = 2 }\n");
  CHECK(remove_value("t = { a = 1 }\n", "t.a") == "t = {}\n");
  // A table inside an inline table is written as an inline table.
  CHECK(set_table("s = { a = { x = 1 } }\n", "s.b", {{"command", quote("c")}}) ==
        "s = { a = { x = 1 }, b = { command = \"c\" } }\n");
}

TEST_CASE("toml_edit: dotted keys") {
  std::string doc = "a.b = 1 # one\nz = 0\n\n[t]\nx.y = 1\n";
  CHECK(set_value(doc, "a.b", "5") == "a.b = 5 # one\nz = 0\n\n[t]\nx.y = 1\n");
  CHECK(set_value(doc, "a.c", "2") == "a.b = 1 # one\nz = 0\na.c = 2\n\n[t]\nx.y = 1\n");
  CHECK(set_value(doc, "t.x.z", "3") == "a.b = 1 # one\nz = 0\n\n[t]\nx.y = 1\nx.z = 3\n");
  CHECK(remove_value(doc, "t.x.y") == "a.b = 1 # one\nz = 0\n\n[t]\n");
}

TEST_CASE("toml_edit: quoted keys and keys that need quoting") {
  std::string doc = "[projects.\"/home/u/repo\"]\ntrust_level = 'untrusted'\n";
  CHECK(set_value(doc, R"(projects."/home/u/repo".trust_level)", quote("trusted")) ==
        "[projects.\"/home/u/repo\"]\ntrust_level = \"trusted\"\n");
  CHECK(set_value(doc, R"(projects."/a/b.c".trust_level)", quote("trusted")) ==
        doc + "\n[projects.\"/a/b.c\"]\ntrust_level = \"trusted\"\n");
  CHECK(split_key(R"(a."b.c".'d e')") == std::vector<std::string>{"a", "b.c", "d e"});
  CHECK(join_key({"a", "b.c", "d e", "x_y-1"}) == R"(a."b.c"."d e".x_y-1)");
  CHECK(split_key(R"("q\"uo\u00e9".c)") == std::vector<std::string>{"q\"uo\u00e9", "c"});
  CHECK(split_key(join_key({"x\"y", "a\\b"})) == std::vector<std::string>{"x\"y", "a\\b"});
  CHECK_THROWS_AS(split_key("a..b"), EditError);
  CHECK_THROWS_AS(split_key("\"open"), EditError);
  CHECK(quote("say \"hi\"\n\\") == R"("say \"hi\"\n\\")");
}

TEST_CASE("toml_edit: multi-line values and non-ASCII text before a value") {
  std::string doc = "arr = [\n  1,\n  2,\n]\ntext = \"\"\"\n[not.a.header]\n\"\"\"\nname = \"ééé\"  # c\n";
  CHECK(set_value(doc, "arr", "[3]") == "arr = [3]\ntext = \"\"\"\n[not.a.header]\n\"\"\"\nname = \"ééé\"  # c\n");
  CHECK(set_value(doc, "name", quote("ü")) ==
        "arr = [\n  1,\n  2,\n]\ntext = \"\"\"\n[not.a.header]\n\"\"\"\nname = \"ü\"  # c\n");
  CHECK(remove_value(doc, "text") == "arr = [\n  1,\n  2,\n]\nname = \"ééé\"  # c\n");
  CHECK(set_value(doc, "extra", "1") == doc + "extra = 1\n");
}

TEST_CASE("toml_edit: CRLF files keep CRLF") {
  std::string doc = "# c\r\nmodel = \"a\"\r\n\r\n[t]\r\nx = 1\r\n";
  CHECK(set_value(doc, "model", quote("b")) == "# c\r\nmodel = \"b\"\r\n\r\n[t]\r\nx = 1\r\n");
  CHECK(set_value(doc, "effort", quote("low")) == "# c\r\nmodel = \"a\"\r\neffort = \"low\"\r\n\r\n[t]\r\nx = 1\r\n");
  CHECK(set_value(doc, "t.y", "2") == "# c\r\nmodel = \"a\"\r\n\r\n[t]\r\nx = 1\r\ny = 2\r\n");
  CHECK(set_value(doc, "u.y", "2") == doc + "\r\n[u]\r\ny = 2\r\n");
  CHECK(remove_value(doc, "t.x") == "# c\r\nmodel = \"a\"\r\n\r\n[t]\r\n");
}

TEST_CASE("toml_edit: tables are replaced in place and removed with their comments") {
  std::string doc = R"(model = "m"

# first server
[mcp_servers.a]
command = "old"   # old command
args = ["x"]
# commented = "kept"

[mcp_servers.a.env]
K = "v"

# second server
[mcp_servers.b]
command = "b"
)";
  auto out = set_table(doc, "mcp_servers.a", {{"command", quote("new")}, {"args", string_array({"1", "2"})}});
  CHECK(out == R"(model = "m"

# first server
[mcp_servers.a]
command = "new"
args = ["1", "2"]
# commented = "kept"

# second server
[mcp_servers.b]
command = "b"
)");
  CHECK(remove_table(doc, "mcp_servers.b") == R"(model = "m"

# first server
[mcp_servers.a]
command = "old"   # old command
args = ["x"]
# commented = "kept"

[mcp_servers.a.env]
K = "v"
)");
  CHECK(remove_table(doc, "mcp_servers.a") == R"(model = "m"

# second server
[mcp_servers.b]
command = "b"
)");
  CHECK(set_table(doc, "mcp_servers.c", {{"url", quote("http://x")}}) ==
        doc + "\n[mcp_servers.c]\nurl = \"http://x\"\n");
  CHECK(remove_table(doc, "mcp_servers.zzz") == doc);
  CHECK_THROWS_AS(remove_table(doc, "model"), EditError);
  CHECK_THROWS_AS(set_value(doc, "mcp_servers.a", "1"), EditError);
  CHECK_THROWS_AS(set_value(doc, "model.x", "1"), EditError);
}

TEST_CASE("toml_edit: a table made of dotted keys is rewritten as a [table]") {
  std::string doc = "mcp_servers.a.command = \"x\"\nmodel = \"m\"\n";
  CHECK(set_table(doc, "mcp_servers.a", {{"command", quote("y")}}) ==
        "model = \"m\"\n\n[mcp_servers.a]\ncommand = \"y\"\n");
  CHECK(remove_table(doc, "mcp_servers.a") == "model = \"m\"\n");
}

TEST_CASE("toml_edit: syntax errors and bad values are refused") {
  std::string bad = "model = \"ok\"\napproval_policy = = \"never\"\n";
  CHECK_THROWS_WITH_AS(set_value(bad, "model", quote("x")), doctest::Contains("2:"), EditError);
  CHECK_THROWS_AS(set_value("a = 1\n", "b", "not a value"), EditError);
  CHECK_THROWS_AS(set_value("a = 1\n", "b", "1\nc = 2"), EditError);
}

TEST_CASE("config_write: a file with a syntax error is not rewritten") {
  ScratchDir home;
  std::string bad = "# mine\nmodel = = \"x\"\n";
  home.write("config.toml", bad);
  std::string where = home.at("config.toml") + ":2:";
  CHECK_THROWS_WITH_AS(set_default_model(home.path(), std::nullopt, std::string("m"), std::nullopt),
                       doctest::Contains(where.c_str()), ConfigError);
  CHECK(home.read("config.toml") == bad);
}

TEST_CASE("config_write: set_default_model writes the top level or the active profile") {
  ScratchDir home;
  SUBCASE("creates the file and removes keys given as nullopt") {
    ScratchDir parent;
    std::string dir = parent.at("new-home");
    set_default_model(dir, std::nullopt, std::string("gpt-4.1"), std::string("high"));
    CHECK(parent.read("new-home/config.toml") == "model = \"gpt-4.1\"\nmodel_reasoning_effort = \"high\"\n");
    set_default_model(dir, std::nullopt, std::string("o3"), std::nullopt);
    CHECK(parent.read("new-home/config.toml") == "model = \"o3\"\n");
  }
  SUBCASE("profile") {
    std::string before = "# top\nmodel = \"top\"\n\n[profiles.fast]\nmodel = \"p\" # mine\n";
    home.write("config.toml", before);
    set_default_model(home.path(), std::string("fast"), std::string("q"), std::string("low"));
    CHECK(home.read("config.toml") ==
          "# top\nmodel = \"top\"\n\n[profiles.fast]\nmodel = \"q\" # mine\nmodel_reasoning_effort = \"low\"\n");
    set_default_model(home.path(), std::string("other"), std::string("r"), std::nullopt);
    CHECK(home.read("config.toml") ==
          "# top\nmodel = \"top\"\n\n[profiles.fast]\nmodel = \"q\" # mine\n"
          "model_reasoning_effort = \"low\"\n\n[profiles.other]\nmodel = \"r\"\n");
  }
  SUBCASE("unknown effort") {
    CHECK_THROWS_AS(set_default_model(home.path(), std::nullopt, std::string("m"), std::string("extreme")), ConfigError);
    CHECK_FALSE(home.exists("config.toml"));
  }
}

TEST_CASE("config_write: writes keep the file mode and go through symlinks") {
  ScratchDir home;
  home.write("real.toml", "model = \"a\"\n");
  REQUIRE(::chmod(home.at("real.toml").c_str(), 0600) == 0);
  std::filesystem::create_symlink(home.at("real.toml"), home.at("config.toml"));
  set_default_model(home.path(), std::nullopt, std::string("b"), std::nullopt);
  CHECK(std::filesystem::is_symlink(home.at("config.toml")));
  CHECK(home.read("real.toml") == "model = \"b\"\n");
  struct stat st {};
  REQUIRE(::stat(home.at("real.toml").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // No temporary files are left behind.
  int files = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(home.path())) ++files;
  CHECK(files == 2);
}

TEST_CASE("config_write: MCP servers are added, replaced and removed") {
  ScratchDir home;
  home.write("config.toml", "# my config\nmodel = \"m\"\n");
  McpServerConfig s;
  s.command = "npx";
  s.args = {"-y", "server"};
  s.env = {{"TOKEN", "abc"}};
  add_mcp_server(home.path(), "docs", s);
  CHECK(home.read("config.toml") ==
        "# my config\nmodel = \"m\"\n\n[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\"-y\", \"server\"]\n"
        "env = { TOKEN = \"abc\" }\n");
  McpServerConfig h;
  h.url = "https://example.com/mcp";
  h.bearer_token_env_var = "TOK";
  h.tool_timeout_sec = 5;
  add_mcp_server(home.path(), "docs", h);
  CHECK(home.read("config.toml") ==
        "# my config\nmodel = \"m\"\n\n[mcp_servers.docs]\nurl = \"https://example.com/mcp\"\n"
        "bearer_token_env_var = \"TOK\"\ntool_timeout_sec = 5.0\n");
  CHECK(remove_mcp_server(home.path(), "docs"));
  CHECK(home.read("config.toml") == "# my config\nmodel = \"m\"\n");
  CHECK_FALSE(remove_mcp_server(home.path(), "docs"));
  CHECK_THROWS_WITH_AS(add_mcp_server(home.path(), "bad name", s), doctest::Contains("invalid server name 'bad name'"),
                       ConfigError);
  CHECK_THROWS_AS(add_mcp_server(home.path(), "empty", McpServerConfig{}), ConfigError);
}

TEST_CASE("toml_edit: positions after an escape the TOML guard wrote are the document's own") {
  // The guard hands toml++ `Ж` as `\u0416` (protocol/config/toml_guard.hpp), so toml++'s columns
  // on that line run 5 ahead of the document's.
  const std::string doc = "a = [\"\"\"\\\n  Жук\"\"\", 2] # keep\nb = 1\n";
  CHECK(set_value(doc, "a", "[1]") == "a = [1] # keep\nb = 1\n");
  CHECK(set_value(doc, "b", "3") == "a = [\"\"\"\\\n  Жук\"\"\", 2] # keep\nb = 3\n");
}
