// `llmx models [--json] [--provider ID]`: the models the configured provider serves, as the model
// registry sees them (its /models list and LiteLLM's /model/info details), or the built-in table
// with a note saying why the provider's list could not be had.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace llmx::cli {

// Registers `models` on `app`; it runs from its CLI11 callback (see run_from_callback).
// `config_overrides` is the root `-c` list.
void add_models_command(CLI::App& app, std::vector<std::string>& config_overrides);

}  // namespace llmx::cli
