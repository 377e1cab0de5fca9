// register_function / function_id / detail::find_function: name-derived ids.
// The registry is process-wide, so every test uses its own names and
// functions (tests also run together in one process).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/function_registry.h"
#include "core/task_context_access.h"
#include "taskgrid/taskgrid.hpp"

namespace {

using taskgrid::Error;
using taskgrid::FunctionId;
using taskgrid::TaskContext;
using taskgrid::TaskFunction;

// Distinct bodies, so that no optimisation may fold two into one address.
std::atomic<int> last_run{0};
template <int N>
void task_fn(TaskContext&) {
  last_run.store(N);
}

void registered_at_static_init(TaskContext&) { last_run.store(-1); }
TASKGRID_REGISTER(registered_at_static_init);

TEST(FunctionRegistry, RegisterThenLookUp) {
  const FunctionId id = taskgrid::register_function("registry_test_round_trip", task_fn<1>);
  EXPECT_NE(id.value, 0u);
  EXPECT_EQ(taskgrid::function_id(task_fn<1>), id);
  const taskgrid::detail::RegisteredFunction* found = taskgrid::detail::find_function(id);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->function, &task_fn<1>);
  EXPECT_EQ(std::string(found->name), "registry_test_round_trip");
}

TEST(FunctionRegistry, UnknownIdsFindNothing) {
  EXPECT_EQ(taskgrid::detail::find_function(FunctionId{0}), nullptr);  // never assigned
  // An id no name used in this program hashes to.
  EXPECT_EQ(taskgrid::detail::find_function(FunctionId{0x12345678u}), nullptr);
}

TEST(FunctionRegistry, RegisteringTheSamePairTwiceIsHarmless) {
  const FunctionId first = taskgrid::register_function("registry_test_twice", task_fn<2>);
  FunctionId second{};
  EXPECT_NO_THROW(second = taskgrid::register_function("registry_test_twice", task_fn<2>));
  EXPECT_EQ(first, second);
  // A name equal in content but stored elsewhere is the same name.
  const std::string copy = "registry_test_twice";
  EXPECT_EQ(taskgrid::register_function(copy.c_str(), task_fn<2>), first);
  EXPECT_EQ(taskgrid::function_id(task_fn<2>), first);
}

TEST(FunctionRegistry, SameNameForAnotherFunctionThrows) {
  const FunctionId id = taskgrid::register_function("registry_test_name_taken", task_fn<3>);
  try {
    taskgrid::register_function("registry_test_name_taken", task_fn<4>);
    FAIL() << "a second function under a taken name was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("registry_test_name_taken"), std::string::npos)
        << e.what();
  }
  // The first registration stands; the second function stays unregistered.
  EXPECT_EQ(taskgrid::function_id(task_fn<3>), id);
  EXPECT_EQ(taskgrid::detail::find_function(id)->function, &task_fn<3>);
  EXPECT_THROW(taskgrid::function_id(task_fn<4>), Error);
}

TEST(FunctionRegistry, SameFunctionUnderASecondNameThrows) {
  const FunctionId id = taskgrid::register_function("registry_test_first_name", task_fn<5>);
  EXPECT_THROW(taskgrid::register_function("registry_test_second_name", task_fn<5>), Error);
  EXPECT_EQ(taskgrid::function_id(task_fn<5>), id);
  // The second name was not taken by the failed call.
  EXPECT_NO_THROW(taskgrid::register_function("registry_test_second_name", task_fn<6>));
  EXPECT_EQ(std::string(taskgrid::detail::find_function(id)->name), "registry_test_first_name");
}

TEST(FunctionRegistry, NameIsCopiedAtRegistration) {
  // register_function takes a C string and documents no lifetime for it: a
  // name built at run time (a binding, a generated name) must not be needed
  // after the call. Changing the caller's buffer in place must not change
  // the registered name.
  // Static, so that a registry keeping the pointer never reads freed memory;
  // assigned each run (in place) so that --gtest_repeat works.
  static std::string name;
  name = "registry_test_runtime_name";
  const FunctionId id = taskgrid::register_function(name.c_str(), task_fn<13>);
  name[0] = 'X';
  const auto* found = taskgrid::detail::find_function(id);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(std::string(found->name), "registry_test_runtime_name");
  EXPECT_EQ(taskgrid::register_function("registry_test_runtime_name", task_fn<13>), id);
}

TEST(FunctionRegistry, FunctionIdOfAnUnregisteredFunctionThrows) {
  EXPECT_THROW(taskgrid::function_id(task_fn<7>), Error);
  EXPECT_THROW(taskgrid::function_id(nullptr), Error);
}

TEST(FunctionRegistry, EmptyNameOrFunctionThrows) {
  EXPECT_THROW(taskgrid::register_function("", task_fn<8>), Error);
  EXPECT_THROW(taskgrid::register_function(nullptr, task_fn<8>), Error);
  EXPECT_THROW(taskgrid::register_function("registry_test_null", nullptr), Error);
  EXPECT_THROW(taskgrid::function_id(task_fn<8>), Error);
}

TEST(FunctionRegistry, IdsAreTheFnv1aHashOfTheName) {
  // FNV-1a, 32 bits: h = 2166136261; per byte h = (h ^ byte) * 16777619 mod 2^32.
  // "a": (0x811c9dc5 ^ 0x61) * 0x01000193 = 0x811c9da4 * 0x01000193
  //      = 0x811d68e40c292c, low 32 bits 0xe40c292c.
  EXPECT_EQ(taskgrid::register_function("a", task_fn<9>).value, 0xe40c292cu);
  // "foobar": the published FNV-1a test vector.
  EXPECT_EQ(taskgrid::register_function("foobar", task_fn<10>).value, 0xbf9cf968u);
  // The id depends on the name only: registering it looks up the same id.
  EXPECT_EQ(taskgrid::function_id(task_fn<9>).value, 0xe40c292cu);
}

TEST(FunctionRegistry, HashCollisionsAreRefused) {
  // "costarring" and "liquid" share FNV-1a hash 0x5e4daa9d.
  const FunctionId id = taskgrid::register_function("costarring", task_fn<11>);
  EXPECT_EQ(id.value, 0x5e4daa9du);
  EXPECT_THROW(taskgrid::register_function("liquid", task_fn<12>), Error);
  EXPECT_THROW(taskgrid::register_function("liquid", task_fn<11>), Error);
  EXPECT_EQ(std::string(taskgrid::detail::find_function(id)->name), "costarring");
  EXPECT_THROW(taskgrid::function_id(task_fn<12>), Error);
}

TEST(FunctionRegistry, StaticRegistrationWorks) {
  const FunctionId id = taskgrid::function_id(registered_at_static_init);
  EXPECT_EQ(id, taskgrid_registered_registered_at_static_init);
  EXPECT_EQ(taskgrid::register_function("registered_at_static_init", registered_at_static_init),
            id);
  const auto* found = taskgrid::detail::find_function(id);
  ASSERT_NE(found, nullptr);
  TaskContext ctx = taskgrid::detail::TaskContextAccess::make(nullptr, 0, nullptr, 0, 0, 0);
  found->function(ctx);
  EXPECT_EQ(last_run.load(), -1);
}

template <int... N>
std::vector<TaskFunction> functions(std::integer_sequence<int, N...>) {
  return {&task_fn<100 + N>...};
}

TEST(FunctionRegistry, ConcurrentRegistrationsAllSucceed) {
  const std::vector<TaskFunction> fns = functions(std::make_integer_sequence<int, 32>{});
  // The registry is told the names for the rest of the program.
  static std::vector<std::string> names;
  if (names.empty())
    for (size_t i = 0; i < fns.size(); ++i)
      names.push_back("registry_test_concurrent_" + std::to_string(i));
  std::vector<FunctionId> ids(fns.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      // Every thread registers every pair (the same pairs: all must agree).
      for (size_t k = 0; k < fns.size(); ++k) {
        const size_t i = (k + t * 8) % fns.size();
        const FunctionId id = taskgrid::register_function(names[i].c_str(), fns[i]);
        if (t == 0) ids[i] = id;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (size_t i = 0; i < fns.size(); ++i) {
    EXPECT_EQ(taskgrid::function_id(fns[i]), ids[i]) << i;
    EXPECT_EQ(taskgrid::detail::find_function(ids[i])->function, fns[i]) << i;
  }
}

}  // namespace
