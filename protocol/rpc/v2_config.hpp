// v2 config/read (the reference's shapes): the effective settings table, which layer each leaf
// value comes from, and optionally the layers themselves. Plain code over config_layers_json.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocol/base/reflect.hpp"
#include "protocol/config/config.hpp"

namespace llmx::v2 {

struct ConfigReadParams {
  bool includeLayers = false;
  Nullable<std::string> cwd;  // llmx has no project layers: checked, and the answer is the same
  LLMX_FIELDS(v("includeLayers", s.includeLayers, Field::defaulted); v("cwd", s.cwd))
};

// One layer: `name` is its source (`{"type":"user","file":…}` or `{"type":"sessionFlags"}`),
// `version` "sha256:<hex>" of its JSON.
struct ConfigLayer {
  RawJson name;
  std::string version;
  RawJson config;
  LLMX_FIELDS(v("name", s.name); v("version", s.version); v("config", s.config))
};

struct ConfigReadResult {
  RawJson config;   // snake_case keys as in config.toml; the well-known ones are null when unset
  RawJson origins;  // dotted leaf path (array elements by index) → {name, version}
  std::optional<std::vector<ConfigLayer>> layers;  // highest precedence first, with includeLayers
  LLMX_FIELDS(v("config", s.config); v("origins", s.origins); v("layers", s.layers))
};

ConfigReadResult config_read(const ConfigLayersJson& layers, bool include_layers);

}  // namespace llmx::v2
