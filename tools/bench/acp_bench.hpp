// llmx-bench rows for `llmx acp` (issue 17): spawn → initialize answered, and one prompt turn
// (session/prompt → its stop reason), next to the app-server's rows.
#pragma once

#include <functional>
#include <string>

namespace llmx::bench {

struct AcpBenchEnv {
  std::string llmx, url, home;
};

void acp_rows(const AcpBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
