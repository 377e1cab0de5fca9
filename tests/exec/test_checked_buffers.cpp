// Checked mode's guarded copies (src/exec/checked_buffers.h): the zones
// around a task's buffer, the comparison of in buffers, the copy-back.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "exec/checked_buffers.h"

namespace taskgrid::exec {
namespace {

comm::wire::Access access_of(AccessMode mode) {
  comm::wire::Access access{};
  access.mode = static_cast<uint8_t>(mode);
  return access;
}

TEST(GuardedBuffer, FreshCopyIsIntactAndAligned) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{100}, size_t{4096}, size_t{70000}}) {
    GuardedBuffer copy(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.data()) % 64, 0u) << bytes;
    std::memset(copy.data(), 0x5a, bytes);  // the whole buffer is the task's
    EXPECT_FALSE(copy.first_corrupted().has_value()) << bytes;
  }
}

TEST(GuardedBuffer, WritePastTheEndIsFoundAtItsOffset) {
  GuardedBuffer copy(4096);
  const uint64_t value = 0;
  std::memcpy(copy.data() + 4096 + 8, &value, sizeof value);
  copy.data()[4096 + 8] = static_cast<char>(~copy.data()[4096 + 8]);  // surely changed
  ASSERT_TRUE(copy.first_corrupted().has_value());
  EXPECT_EQ(*copy.first_corrupted(), 4096 + 8);
}

TEST(GuardedBuffer, WriteBeforeTheStartIsNegative) {
  GuardedBuffer copy(100);
  copy.data()[-3] = static_cast<char>(~copy.data()[-3]);
  ASSERT_TRUE(copy.first_corrupted().has_value());
  EXPECT_EQ(*copy.first_corrupted(), -3);
}

TEST(GuardedBuffer, ZonesCoverAtLeastTheirSizeThenFault) {
  GuardedBuffer copy(4096);
  // The last byte of the back zone is writable; past the zone is the guard page.
  copy.data()[4096 + GuardedBuffer::kZoneBytes - 1] ^= 1;
  EXPECT_EQ(*copy.first_corrupted(), 4096 + static_cast<int64_t>(GuardedBuffer::kZoneBytes) - 1);
  EXPECT_DEATH(copy.data()[4096 + 512] = 1, "");
}

TEST(FirstDifference, FindsTheFirstChangedByte) {
  std::vector<char> a(1000, 1), b(1000, 1);
  EXPECT_FALSE(first_difference(a.data(), b.data(), a.size()).has_value());
  b[640] = 2;
  b[900] = 2;
  EXPECT_EQ(first_difference(a.data(), b.data(), a.size()), 640u);
}

TEST(Describe, NamesAccessModeAndOffset) {
  EXPECT_EQ(describe_corruption(0, static_cast<uint8_t>(AccessMode::inout), 4096, 4104),
            "wrote past the end of access 0 (inout, 4096 bytes) at offset 4096+8");
  EXPECT_EQ(describe_corruption(2, static_cast<uint8_t>(AccessMode::out), 64, -8),
            "wrote before the start of access 2 (out, 64 bytes) at offset -8");
  EXPECT_EQ(describe_in_write(1, 4096, 24),
            "wrote to access 1 (in, 4096 bytes), which it may only read, first at offset 24");
}

TEST(CheckedBuffers, CopiesBackOutputsAndLeavesInputs) {
  std::vector<char> in(64, 'i'), inout(128, 'x'), out(32, '?');
  const Buffer buffers[] = {
      {in.data(), in.size()}, {inout.data(), inout.size()}, {out.data(), out.size()}};
  const comm::wire::Access accesses[] = {access_of(AccessMode::in), access_of(AccessMode::inout),
                                         access_of(AccessMode::out)};
  CheckedBuffers checked;
  const Buffer* copies = checked.copy_in(buffers, 3);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NE(copies[i].data, buffers[i].data);
    EXPECT_EQ(copies[i].size, buffers[i].size);
  }
  EXPECT_EQ(static_cast<char*>(copies[1].data)[5], 'x');  // copied in
  std::memset(copies[1].data, 'y', 128);
  std::memset(copies[2].data, 'o', 32);
  EXPECT_EQ(checked.check_and_copy_back(buffers, accesses, 3), "");
  EXPECT_EQ(inout, std::vector<char>(128, 'y'));
  EXPECT_EQ(out, std::vector<char>(32, 'o'));
  EXPECT_EQ(in, std::vector<char>(64, 'i'));
}

TEST(CheckedBuffers, WriteToAnInBufferIsReported) {
  std::vector<char> in(4096, 0);
  const Buffer buffers[] = {{in.data(), in.size()}};
  const comm::wire::Access accesses[] = {access_of(AccessMode::in)};
  CheckedBuffers checked;
  static_cast<char*>(checked.copy_in(buffers, 1)[0].data)[24] = 7;
  EXPECT_EQ(checked.check_and_copy_back(buffers, accesses, 1),
            "wrote to access 0 (in, 4096 bytes), which it may only read, first at offset 24");
  EXPECT_EQ(in[24], 0);  // the version the copy came from is untouched
}

TEST(CheckedBuffers, OverrunIsReportedAndNotCopiedBack) {
  std::vector<char> inout(4096, 0);
  const Buffer buffers[] = {{inout.data(), inout.size()}};
  const comm::wire::Access accesses[] = {access_of(AccessMode::inout)};
  CheckedBuffers checked;
  char* copy = static_cast<char*>(checked.copy_in(buffers, 1)[0].data);
  copy[0] = 1;
  copy[4096] = static_cast<char>(~copy[4096]);
  EXPECT_EQ(checked.check_and_copy_back(buffers, accesses, 1),
            "wrote past the end of access 0 (inout, 4096 bytes) at offset 4096+0");
  EXPECT_EQ(inout[0], 0);
  // A copy kept after a passing check is reused with its zones intact.
  void* const kept = checked.copy_in(buffers, 1)[0].data;
  EXPECT_EQ(checked.check_and_copy_back(buffers, accesses, 1), "");
  EXPECT_EQ(checked.copy_in(buffers, 1)[0].data, kept);
  EXPECT_EQ(checked.check_and_copy_back(buffers, accesses, 1), "");
}

}  // namespace
}  // namespace taskgrid::exec
