// Every setting's default is written twice: RuntimeOptions' initialiser (what
// applies when the variable is unset) and the settings table's string (what
// TASKGRID_DISPLAY_ENV shows and the ranks' agreement check compares). A
// default changed in one place only would show one value and run with
// another. Here each displayed default, set as the variable, must read back
// as the options with nothing set.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "comm/mpi/transport.h"
#include "runtime/options.h"

namespace taskgrid::runtime {
namespace {

// Unsets every setting for the test's length, and puts back what was set.
class CleanEnvironment {
 public:
  CleanEnvironment() {
    for (const auto& [name, shown] : displayed_defaults()) {
      if (const char* value = std::getenv(name.c_str())) saved_.emplace_back(name, value);
      unsetenv(name.c_str());
    }
  }
  ~CleanEnvironment() {
    for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
  }
  CleanEnvironment(const CleanEnvironment&) = delete;
  CleanEnvironment& operator=(const CleanEnvironment&) = delete;

 private:
  std::vector<std::pair<std::string, std::string>> saved_;
};

// The options read with `name` set to `value` (and `also`, when given).
RuntimeOptions read_with(const std::string& name, const std::string& value,
                         const std::optional<std::pair<std::string, std::string>>& also = {}) {
  setenv(name.c_str(), value.c_str(), 1);
  if (also) setenv(also->first.c_str(), also->second.c_str(), 1);
  RuntimeOptions options = read_options_from_environment();
  unsetenv(name.c_str());
  if (also) unsetenv(also->first.c_str());
  return options;
}

TEST(SettingsDefaults, EachDisplayedDefaultIsTheOneInEffect) {
  const CleanEnvironment clean;
  const RuntimeOptions unset;
  ASSERT_EQ(read_options_from_environment(), unset);
  size_t compared = 0;
  for (const auto& [name, shown] : displayed_defaults()) {
    SCOPED_TRACE(name + " shown as \"" + shown + "\"");
    if (name == "TASKGRID_THREADS") {
      // Computed at start-up from the rank's cores and the ranks sharing them.
      EXPECT_EQ(shown, "its cores / ranks on them");
      EXPECT_EQ(unset.threads, 0);
      cpu_set_t mask;
      ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
      const int cores = CPU_COUNT(&mask);
      EXPECT_EQ(default_threads(1), cores);
      EXPECT_EQ(default_threads(2), std::max(1, cores / 2));
      EXPECT_EQ(default_threads(cores + 1), 1);
      continue;
    }
    if (shown == "(none)") continue;  // a path: unset is none (the initialiser's "")
    if (name == "TASKGRID_CHECKPOINT_EVERY") {
      // Only with a checkpoint folder, where 0 (unset) means the shown value.
      const std::pair<std::string, std::string> folder{"TASKGRID_CHECKPOINT", "/nonexistent"};
      EXPECT_EQ(read_with(name, shown, folder), read_with(folder.first, folder.second));
      ++compared;
      continue;
    }
    RuntimeOptions read = read_with(name, shown);
    if (name == "TASKGRID_MODE") {
      // Set, it is also remembered as set (the program's mode may contradict it).
      EXPECT_EQ(read.mode_variable, unset.mode);
      read.mode_variable.reset();
    }
    if (name == "TASKGRID_CHUNK_BYTES") {
      // 0, unset, is the MPI transport's largest message, which is what is shown.
      EXPECT_EQ(read.chunk_bytes, comm::mpi::MpiTransport::kMaxChunk);
      read.chunk_bytes = unset.chunk_bytes;
    }
    EXPECT_EQ(read, unset);
    ++compared;
  }
  EXPECT_GE(compared, 25u);  // not vacuous: the table has about thirty such settings
}

}  // namespace
}  // namespace taskgrid::runtime
