// The files of a checkpoint (TASKGRID_CHECKPOINT=DIR), and nothing else:
// no MPI, no planner. One folder per checkpoint, DIR/ckpt-<K> (K: the
// submissions it covers), holding
//
//   rank-<r>.bin  what rank r held at K: one record per version it wrote
//                 (the handle's bytes) and, on a rank that runs the
//                 program, one per observation the program made before K (a
//                 fetch's bytes, for the replay); each record with its
//                 CRC-32, the file closed by a trailer that counts them.
//                 Written as rank-<r>.tmp, fsynced, then renamed.
//   MANIFEST     text, written last by rank 0 once every rank's file is
//                durable (fsynced, renamed, the folder fsynced): the job's
//                shape, the program's and the submission sequence's hashes,
//                and the live handles with the rank that wrote each. Its own
//                last line is its checksum. A folder without one is no
//                checkpoint.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace taskgrid::runtime {

// CRC-32 (zlib's) of a block, continuing from `crc` (0 to start).
uint32_t checksum(const void* data, size_t bytes, uint32_t crc = 0);

std::string checkpoint_folder(const std::string& dir, uint64_t checkpoint);
std::string rank_file_name(int rank);  // "rank-<r>.bin"

// One rank's file, written record by record (from task bodies, serialised
// by the caller). A failed write is remembered, not thrown: the job goes on
// and the checkpoint is reported incomplete (error()).
class RankFileWriter {
 public:
  RankFileWriter(const std::string& folder, int rank, int ranks, uint64_t checkpoint);
  ~RankFileWriter();
  RankFileWriter(const RankFileWriter&) = delete;
  RankFileWriter& operator=(const RankFileWriter&) = delete;

  void add_version(uint64_t handle, const void* data, size_t bytes);
  void add_observation(uint64_t call, uint64_t handle, const void* data, size_t bytes);
  // Trailer, fsync, rename into place, fsync of the folder. True when the
  // file is durable.
  bool seal();
  const std::string& error() const { return error_; }
  uint64_t records() const { return records_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  void add(uint32_t kind, uint64_t a, uint64_t b, const void* data, size_t bytes);
  void write(const void* data, size_t bytes);
  void fail(const std::string& what);

  std::string folder_;
  std::string temporary_;
  std::string final_;
  std::FILE* file_ = nullptr;
  uint64_t records_ = 0;
  uint64_t bytes_written_ = 0;
  std::string error_;
};

// One rank's file, read back and checked whole: header (rank, job size,
// checkpoint), every record's checksum, the trailer's counts.
struct RankFileContents {
  std::map<uint64_t, std::vector<char>> versions;  // by handle id
  struct Observation {
    uint64_t call;
    uint64_t handle;
    std::vector<char> bytes;
  };
  std::vector<Observation> observations;  // in call order
};
// Throws taskgrid::Error naming the file and what is wrong with it.
RankFileContents read_rank_file(const std::string& folder, int rank, int ranks,
                                uint64_t checkpoint);

struct Manifest {
  uint64_t checkpoint = 0;  // K: the submissions it covers
  int ranks = 0;
  std::string mode;  // "cluster" or "spmd"
  uint64_t program_hash = 0;
  uint64_t sequence_hash = 0;
  struct Handle {
    uint64_t id;
    uint64_t bytes;
    int rank;  // the rank whose file holds it
  };
  std::vector<Handle> handles;  // by id
};
// Writes DIR/ckpt-K/MANIFEST durably (temporary, fsync, rename, fsync of
// the folder). Returns "" or what failed.
std::string write_manifest(const std::string& folder, const Manifest& manifest);
// Throws taskgrid::Error naming the file and what is wrong with it.
Manifest read_manifest(const std::string& folder);

// The checkpoints of DIR that have a manifest, oldest first.
std::vector<uint64_t> complete_checkpoints(const std::string& dir);
// Removes DIR/ckpt-K and what is in it; "" or what failed.
std::string remove_checkpoint(const std::string& dir, uint64_t checkpoint);

}  // namespace taskgrid::runtime
