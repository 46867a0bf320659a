// llmx-bench rows for what the provider serves (issue 19): the first `model/list` (the model
// registry fetches /models and /model/info from the proxy), and `model/list` answered from its
// cache afterwards (goal: under 1 ms).
#pragma once

#include <functional>
#include <string>

namespace llmx::bench {

struct ModelsBenchEnv {
  std::string llmx, url, home;
};

void models_rows(const ModelsBenchEnv& env, const std::function<void(std::string)>& row);

}  // namespace llmx::bench
