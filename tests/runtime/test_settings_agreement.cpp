// Job-wide settings compared across ranks (runtime/options.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/options.h"

namespace taskgrid::runtime {
namespace {

TEST(SettingsAgreement, EqualSettingsAgree) {
  const std::string mine = "TASKGRID_MODE=spmd\nTASKGRID_CHANNELS=4\n";
  EXPECT_EQ(settings_disagreement({mine, mine, mine}), "");
}

TEST(SettingsAgreement, NamesTheSettingTheValuesAndTheRanks) {
  const std::string four = "TASKGRID_MODE=spmd\nTASKGRID_CHANNELS=4\n";
  const std::string eight = "TASKGRID_MODE=spmd\nTASKGRID_CHANNELS=8\n";
  const std::string message = settings_disagreement({four, eight, four, eight});
  EXPECT_EQ(message.find("TASKGRID_MODE"), std::string::npos) << message;
  EXPECT_NE(message.find("TASKGRID_CHANNELS differs between ranks: \"4\" on ranks 0 2, \"8\" on "
                         "ranks 1 3"),
            std::string::npos)
      << message;
}

TEST(SettingsAgreement, EverySettingThatDiffersIsNamed) {
  const std::string message =
      settings_disagreement({"TASKGRID_MODE=spmd\nTASKGRID_BCAST=auto\n",
                             "TASKGRID_MODE=cluster\nTASKGRID_BCAST=tree\n"});
  EXPECT_NE(message.find("TASKGRID_MODE differs between ranks: \"spmd\" on rank 0, \"cluster\" "
                         "on rank 1"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("TASKGRID_BCAST differs"), std::string::npos) << message;
}

TEST(SettingsAgreement, PerRankSettingsAreLeftOut) {
  setenv("TASKGRID_THREADS", "3", 1);
  setenv("TASKGRID_CHANNELS", "7", 1);
  RuntimeOptions options;
  options.mode = taskgrid::Mode::spmd;
  const std::string settings = job_wide_settings(options);
  unsetenv("TASKGRID_THREADS");
  unsetenv("TASKGRID_CHANNELS");
  EXPECT_EQ(settings.find("TASKGRID_THREADS"), std::string::npos) << settings;
  EXPECT_EQ(settings.find("TASKGRID_DISPLAY_ENV"), std::string::npos) << settings;
  EXPECT_NE(settings.find("TASKGRID_CHANNELS=7\n"), std::string::npos) << settings;
  EXPECT_NE(settings.find("TASKGRID_MODE=spmd\n"), std::string::npos) << settings;
  EXPECT_NE(settings.find("TASKGRID_FAILURE_TIMEOUT=5\n"), std::string::npos) << settings;
}

// Checked mode changes what every rank sends (argument types) and checks:
// all ranks must agree on it. Only 0 and 1 are values.
TEST(SettingsAgreement, CheckedModeIsJobWide) {
  setenv("TASKGRID_CHECK", "1", 1);
  const RuntimeOptions options = read_options_from_environment();
  const std::string settings = job_wide_settings(options);
  setenv("TASKGRID_CHECK", "yes", 1);
  EXPECT_THROW(read_options_from_environment(), Error);
  unsetenv("TASKGRID_CHECK");
  EXPECT_TRUE(options.check);
  EXPECT_FALSE(read_options_from_environment().check);
  EXPECT_NE(settings.find("TASKGRID_CHECK=1\n"), std::string::npos) << settings;
}

}  // namespace
}  // namespace taskgrid::runtime
