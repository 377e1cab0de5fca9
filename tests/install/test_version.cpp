// The version API: the macros of the generated taskgrid/version.h agree with
// the CMake project version, and the library reports the same version.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "taskgrid/taskgrid.h"
#include "taskgrid/taskgrid.hpp"

TEST(Version, MacrosMatchTheProjectVersion) {
  EXPECT_STREQ(TASKGRID_VERSION_STRING, EXPECTED_VERSION);
  EXPECT_EQ(TASKGRID_VERSION_MAJOR, EXPECTED_MAJOR);
  EXPECT_EQ(TASKGRID_VERSION_MINOR, EXPECTED_MINOR);
  EXPECT_EQ(TASKGRID_VERSION_PATCH, EXPECTED_PATCH);
  char joined[64];
  std::snprintf(joined, sizeof joined, "%d.%d.%d", TASKGRID_VERSION_MAJOR, TASKGRID_VERSION_MINOR,
                TASKGRID_VERSION_PATCH);
  EXPECT_STREQ(joined, TASKGRID_VERSION_STRING);
  EXPECT_EQ(TASKGRID_VERSION,
            TASKGRID_VERSION_MAJOR * 10000 + TASKGRID_VERSION_MINOR * 100 + TASKGRID_VERSION_PATCH);
}

TEST(Version, LibraryReportsTheHeadersVersion) {
  EXPECT_STREQ(taskgrid::version(), TASKGRID_VERSION_STRING);
  EXPECT_STREQ(tg_version(), TASKGRID_VERSION_STRING);
}
