// Unit tests name the one scratch folder (test/support/temp_dir.hpp) ScratchDir.
#pragma once

#include "test/support/temp_dir.hpp"

namespace llmx::test {

using ScratchDir = TempDir;

}  // namespace llmx::test
