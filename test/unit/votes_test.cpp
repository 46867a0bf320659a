#include <doctest/doctest.h>

#include "protocol/base/votes.hpp"

TEST_CASE("votes: on while anyone asks, with news only when the outcome changes") {
  llmx::Votes<int> v;
  CHECK_FALSE(v.any());
  CHECK(v.set(1, true) == true);
  CHECK_FALSE(v.set(2, true));   // still on
  CHECK_FALSE(v.set(1, true));   // asking twice counts once
  CHECK_FALSE(v.set(1, false));  // 2 still asks
  CHECK(v.any());
  CHECK(v.set(2, false) == false);
  CHECK_FALSE(v.set(3, false));  // never asked: nothing changes
  CHECK_FALSE(v.any());
}
