// The conversation manager's shutdown bookkeeping (actors/shutdown_plan.hpp), without actors.
#include <doctest/doctest.h>

#include <algorithm>

#include "actors/shutdown_plan.hpp"

using llmx::ShutdownPlan;

TEST_CASE("shutdown plan: only conversations that ran a task are waited for") {
  ShutdownPlan plan;
  CHECK_FALSE(plan.started("a"));  // before a shutdown: nothing to tell
  CHECK_FALSE(plan.started("a"));  // a second task changes nothing
  CHECK_FALSE(plan.started("b"));
  CHECK_FALSE(plan.sync(0));  // no shutdown yet
  auto told = plan.begin();
  std::sort(told.begin(), told.end());
  CHECK(told == std::vector<std::string>{"a", "b"});
  CHECK_FALSE(plan.sync(0));  // both still running
  plan.ended("a");
  CHECK_FALSE(plan.sync(0));
  plan.ended("b");
  CHECK(plan.sync(0));
  CHECK_FALSE(plan.sync(0));  // syncing already
  CHECK(plan.synced(0));      // answer
  CHECK_FALSE(plan.sync(0));  // answered: never again
  CHECK_FALSE(plan.started("c"));  // a task after the answer: its slice ends it
}

TEST_CASE("shutdown plan: with nothing engaged it syncs at once, but waits for an archive") {
  ShutdownPlan plan;
  CHECK(plan.begin().empty());
  CHECK_FALSE(plan.sync(1));  // a conversation shutting down to be archived
  CHECK(plan.sync(0));
  CHECK(plan.synced(0));
}

TEST_CASE("shutdown plan: a first task that begins during the shutdown is told and waited for") {
  SUBCASE("while it waits") {
    ShutdownPlan plan;
    plan.started("a");
    plan.begin();
    CHECK(plan.started("late"));  // tell it now
    plan.ended("a");
    CHECK_FALSE(plan.sync(0));  // "late" still runs
    plan.ended("late");
    CHECK(plan.sync(0));
    CHECK(plan.synced(0));
  }
  SUBCASE("while the store syncs: no answer, and a second sync once it ended") {
    ShutdownPlan plan;
    plan.begin();
    CHECK(plan.sync(0));
    CHECK(plan.started("late"));
    CHECK_FALSE(plan.synced(0));  // it ends first
    CHECK_FALSE(plan.sync(0));
    plan.ended("late");
    CHECK(plan.sync(0));
    CHECK(plan.synced(0));
  }
  SUBCASE("an archive begun while the store syncs holds the answer the same way") {
    ShutdownPlan plan;
    plan.begin();
    CHECK(plan.sync(0));
    CHECK_FALSE(plan.synced(1));
    CHECK(plan.sync(0));
    CHECK(plan.synced(0));
  }
  SUBCASE("one that ended while the store synced does not hold the answer") {
    ShutdownPlan plan;
    plan.begin();
    CHECK(plan.sync(0));
    CHECK(plan.started("late"));
    plan.ended("late");
    CHECK(plan.synced(0));
  }
}
