#include "models_command.hpp"

#include <algorithm>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "actors/engine.hpp"
#include "actors/model_registry.hpp"
#include "cli_util.hpp"
#include "protocol/config/config.hpp"

namespace llmx::cli {

namespace {

struct ModelsOptions {
  bool json = false;
  std::string provider;
};

// The registry's answer, waiting as long as a fetch may take.
models::ModelCatalog fetch(const ModelProviderInfo& provider) {
  caf::actor_system_config sys_cfg;
  configure_system(sys_cfg);
  caf::actor_system sys{sys_cfg};
  auto registry = spawn_model_registry(sys);
  models::ModelCatalog out;
  {
    caf::scoped_actor self{sys};
    self->request(registry, caf::infinite, ModelsQuery{provider, 15000, false})
        .receive([&](models::ModelCatalog& c) { out = std::move(c); },
                 [&](caf::error& err) { out = models::builtin_catalog(sys.render(err)); });
  }
  caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
  return out;
}

std::string tokens(const std::optional<int64_t>& n) { return n ? models::token_text(*n) : "-"; }

std::string capabilities(const models::ModelMeta& m) {
  auto caps = models::capability_text(m);
  return caps.empty() ? "-" : caps;
}

void print_human(const Config& cfg, const models::ModelCatalog& c) {
  fmt::print("Models of provider `{}` ({}){}:\n", cfg.provider.id, cfg.provider.base_url,
             c.source == "provider" ? "" : " - llmx's built-in table");
  size_t width = 5;
  for (const auto& m : c.models) width = std::max(width, m.id.size());
  fmt::print("  {:<{}}  {:>7}  {:>6}  {}\n", "MODEL", width, "CONTEXT", "OUTPUT", "CAPABILITIES");
  for (const auto& m : c.models)
    fmt::print("{} {:<{}}  {:>7}  {:>6}  {}\n", m.id == cfg.model ? '*' : ' ', m.id, width, tokens(m.context_window),
               tokens(m.max_output_tokens), capabilities(m));
  bool listed = std::any_of(c.models.begin(), c.models.end(), [&](const auto& m) { return m.id == cfg.model; });
  if (!listed) fmt::print("The configured model `{}` is not in this list.\n", cfg.model);
  if (c.note) fmt::print("note: {}\n", *c.note);
}

}  // namespace

void add_models_command(CLI::App& app, std::vector<std::string>& config_overrides) {
  auto opts = std::make_shared<ModelsOptions>();
  auto* cmd = app.add_subcommand("models", "List the models the provider serves (its /models and LiteLLM's details)");
  cmd->add_flag("--json", opts->json, "Print JSON");
  cmd->add_option("--provider", opts->provider, "A provider id other than the configured one");
  cmd->callback([opts, &config_overrides] {
    run_from_callback([&] {
      ConfigOverrides o;
      o.cli_overrides = config_overrides;
      if (!opts->provider.empty()) o.model_provider = opts->provider;
      auto cfg = load_config(o);
      for (const auto& w : cfg.warnings) fmt::print(stderr, "warning: {}\n", w);
      auto catalog = fetch(cfg.provider);
      if (opts->json)
        fmt::print("{}\n", models::catalog_report_json(catalog, cfg.provider, cfg.model));
      else
        print_human(cfg, catalog);
      return 0;
    });
  });
}

}  // namespace llmx::cli
