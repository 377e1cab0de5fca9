// NCCL loaded at run time (src/device/nccl.h), against stand-ins built here
// (fake_nccl.c): the loader's answers where the library is missing, partial,
// too old or there, without NCCL or a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "device/emulated_backend.h"
#include "device/nccl.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::device {
namespace {

TEST(NcclLoader, AMissingLibraryIsNamedWithTheLoadersReason) {
  std::string why;
  EXPECT_EQ(open_nccl("/nonexistent/libnccl.so.2", why), nullptr);
  EXPECT_EQ(why.rfind("/nonexistent/libnccl.so.2 not found: ", 0), 0u) << why;
  EXPECT_NE(why.find("No such file"), std::string::npos) << why;
}

TEST(NcclLoader, ALibraryWithoutAnEntryPointIsRefused) {
  std::string why;
  EXPECT_EQ(open_nccl(TASKGRID_FAKE_NCCL_PARTIAL, why), nullptr);
  EXPECT_NE(why.find("has no ncclAllReduce"), std::string::npos) << why;
}

TEST(NcclLoader, TheVersionIsReadAndAnOldOneRefused) {
  std::string why;
  ::unsetenv("FAKE_NCCL_VERSION");
  std::unique_ptr<NcclLibrary> nccl = open_nccl(TASKGRID_FAKE_NCCL, why);
  ASSERT_NE(nccl, nullptr) << why;
  EXPECT_EQ(nccl->version(), 22809);
  EXPECT_EQ(nccl->version_string(), "2.28.9");
  EXPECT_EQ(nccl->path(), TASKGRID_FAKE_NCCL);

  ::setenv("FAKE_NCCL_VERSION", "2304", 1);
  EXPECT_EQ(open_nccl(TASKGRID_FAKE_NCCL, why), nullptr);
  ::unsetenv("FAKE_NCCL_VERSION");
  EXPECT_NE(why.find("is NCCL 2.3.4; TaskGrid needs NCCL 2.4 or later"), std::string::npos) << why;
}

TEST(NcclLoader, VersionCodesOfBothSchemesAreSpelledOut) {
  EXPECT_EQ(nccl_version_string(2804), "2.8.4");
  EXPECT_EQ(nccl_version_string(21903), "2.19.3");
  EXPECT_EQ(nccl_version_string(22809), "2.28.9");
}

TEST(NcclLoader, UniqueIdsComeFromTheLibrary) {
  std::string why;
  std::unique_ptr<NcclLibrary> nccl = open_nccl(TASKGRID_FAKE_NCCL, why);
  ASSERT_NE(nccl, nullptr) << why;
  const NcclUniqueId id = nccl->unique_id();
  for (int i = 0; i < 128; ++i) EXPECT_EQ(id.bytes[i], static_cast<char>(i * 3 + 1));
}

TEST(NcclLoader, ACommunicatorNeedsTheCudaBackend) {
  std::string why;
  std::unique_ptr<NcclLibrary> nccl = open_nccl(TASKGRID_FAKE_NCCL, why);
  ASSERT_NE(nccl, nullptr) << why;
  EmulatedBackend emulated(1, 1 << 20);
  try {
    nccl->create_communicator(emulated, 0, 1, 0, nccl->unique_id());
    FAIL() << "a communicator on the emulated device";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "NCCL: a communicator needs the cuda device backend, not emulated");
  }
}

TEST(NcclLoader, ErrorsCarryNcclsMessageAndCode) {
  std::string why;
  std::unique_ptr<NcclLibrary> nccl = open_nccl(TASKGRID_FAKE_NCCL, why);
  ASSERT_NE(nccl, nullptr) << why;
  EXPECT_EQ(nccl->error(5), "fake invalid usage (5)");
}

}  // namespace
}  // namespace taskgrid::device
