// The checkpoint's files (runtime/checkpoint_file.h): what is written reads
// back the same, and every kind of damage is named, never read as data.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/checkpoint_file.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::runtime {
namespace {

class CheckpointFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("taskgrid-ckpt-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Rank 1 of 2, checkpoint 40: two versions and an observation.
  std::string write_rank_file() {
    const std::string folder = checkpoint_folder(dir_.string(), 40);
    RankFileWriter writer(folder, 1, 2, 40);
    writer.add_version(7, first_.data(), first_.size());
    writer.add_version(9, nullptr, 0);
    writer.add_observation(12, 7, second_.data(), second_.size());
    EXPECT_TRUE(writer.seal()) << writer.error();
    EXPECT_EQ(writer.records(), 3u);
    return folder;
  }
  std::string read_error(const std::string& folder, int rank = 1, int ranks = 2,
                         uint64_t checkpoint = 40) {
    try {
      read_rank_file(folder, rank, ranks, checkpoint);
    } catch (const Error& error) {
      return error.what();
    }
    return "";
  }
  static void flip_byte(const std::string& path, std::streamoff at) {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(at);
    char byte = 0;
    file.get(byte);
    file.seekp(at);
    file.put(static_cast<char>(byte ^ 0x10));
  }

  std::filesystem::path dir_;
  std::vector<char> first_ = std::vector<char>(1000, 'a');
  std::vector<char> second_ = {'x', 'y', 'z'};
};

TEST_F(CheckpointFileTest, RankFileReadsBackWhatWasWritten) {
  const std::string folder = write_rank_file();
  EXPECT_FALSE(std::filesystem::exists(folder + "/rank-1.tmp"));
  const RankFileContents contents = read_rank_file(folder, 1, 2, 40);
  ASSERT_EQ(contents.versions.size(), 2u);
  EXPECT_EQ(contents.versions.at(7), first_);
  EXPECT_TRUE(contents.versions.at(9).empty());
  ASSERT_EQ(contents.observations.size(), 1u);
  EXPECT_EQ(contents.observations[0].call, 12u);
  EXPECT_EQ(contents.observations[0].handle, 7u);
  EXPECT_EQ(contents.observations[0].bytes, second_);
}

TEST_F(CheckpointFileTest, EveryDamageIsNamed) {
  const std::string folder = write_rank_file();
  const std::string path = folder + "/rank-1.bin";
  EXPECT_NE(read_error(folder, 1, 4).find("expected rank 1 of 4"), std::string::npos);
  EXPECT_NE(read_error(folder, 1, 2, 41).find("checkpoint 41"), std::string::npos);
  EXPECT_NE(read_error(folder, 0).find("rank-0.bin: cannot open it"), std::string::npos);

  flip_byte(path, 24 + 32 + 500);  // inside the first version's bytes
  EXPECT_NE(read_error(folder).find("the checksum of record 0 (handle 7) does not match"),
            std::string::npos);
  flip_byte(path, 24 + 32 + 500);

  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 1);
  EXPECT_NE(read_error(folder).find("truncated or corrupt"), std::string::npos);
  std::filesystem::resize_file(path, 30);
  EXPECT_NE(read_error(folder).find("truncated (30 bytes)"), std::string::npos);
}

TEST_F(CheckpointFileTest, ManifestRoundTripAndChecksum) {
  const std::string folder = checkpoint_folder(dir_.string(), 40);
  std::filesystem::create_directories(folder);
  Manifest manifest;
  manifest.checkpoint = 40;
  manifest.ranks = 2;
  manifest.mode = "spmd";
  manifest.program_hash = 0x1234567890abcdefull;
  manifest.sequence_hash = 42;
  manifest.handles = {{3, 4096, 0}, {5, 0, 1}};
  ASSERT_EQ(write_manifest(folder, manifest), "");
  const Manifest read = read_manifest(folder);
  EXPECT_EQ(read.checkpoint, 40u);
  EXPECT_EQ(read.ranks, 2);
  EXPECT_EQ(read.mode, "spmd");
  EXPECT_EQ(read.program_hash, manifest.program_hash);
  EXPECT_EQ(read.sequence_hash, 42u);
  ASSERT_EQ(read.handles.size(), 2u);
  EXPECT_EQ(read.handles[1].id, 5u);
  EXPECT_EQ(read.handles[1].rank, 1);
  EXPECT_EQ(complete_checkpoints(dir_.string()), std::vector<uint64_t>{40});

  flip_byte(folder + "/MANIFEST", 25);
  EXPECT_THROW(
      {
        try {
          read_manifest(folder);
        } catch (const Error& error) {
          EXPECT_NE(std::string(error.what()).find("its checksum does not match"),
                    std::string::npos);
          throw;
        }
      },
      Error);
}

TEST_F(CheckpointFileTest, OnlyFoldersWithAManifestAreCheckpoints) {
  write_rank_file();  // ckpt-40: a rank file, no manifest
  std::filesystem::create_directories(checkpoint_folder(dir_.string(), 80));
  ASSERT_EQ(write_manifest(checkpoint_folder(dir_.string(), 80), Manifest{}), "");
  std::filesystem::create_directories(dir_ / "ckpt-x");
  EXPECT_EQ(complete_checkpoints(dir_.string()), std::vector<uint64_t>{80});
  EXPECT_EQ(remove_checkpoint(dir_.string(), 80), "");
  EXPECT_TRUE(complete_checkpoints(dir_.string()).empty());
  EXPECT_TRUE(complete_checkpoints((dir_ / "no-such").string()).empty());
}

TEST_F(CheckpointFileTest, AnUnwritableFolderIsAnErrorNotAThrow) {
  RankFileWriter writer("/proc/taskgrid-no-such/ckpt-1", 0, 1, 1);
  writer.add_version(1, "abc", 3);
  EXPECT_FALSE(writer.seal());
  EXPECT_NE(writer.error().find("cannot create /proc/taskgrid-no-such/ckpt-1"), std::string::npos);
}

}  // namespace
}  // namespace taskgrid::runtime
