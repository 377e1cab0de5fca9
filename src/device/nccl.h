// NCCL, loaded at run time like the CUDA runtime (device/cuda_backend.h):
// nothing needs NCCL to build, to test or to run; where libnccl.so.2 loads
// and the backend is CUDA, collectives on device memory can go through it.
//
// Only what collectives on a group of ranks need is resolved: the version,
// a unique id, communicator set-up and tear-down, broadcast and all-reduce,
// error strings and the asynchronous error of a communicator. No MPI here:
// the caller creates the unique id on one rank and gives it to the others.
//
// Which library: TASKGRID_NCCL_LIBRARY (a path or a name) when set, else
// "libnccl.so.2" on the loader's default search path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "device/backend.h"

namespace taskgrid::device {

// NCCL's unique id: created on one rank, copied to every rank of the communicator.
struct NcclUniqueId {
  char bytes[128] = {};
};

// In the order of pgas::DataType and pgas::ReduceOp (which cast to them).
enum class NcclType : uint8_t { int32, int64, uint32, uint64, float32, float64 };
enum class NcclOp : uint8_t { sum, prod, min, max };

class NcclLibrary;

// A communicator on one device of this process, for `ranks` ranks. Its
// operations are enqueued on a stream of the device backend; whoever waits
// for them records an event after them (Backend::record_event).
class NcclCommunicator {
 public:
  ~NcclCommunicator();  // ncclCommDestroy (ncclCommAbort after a failure)
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int ranks() const { return ranks_; }
  int rank() const { return rank_; }
  int device() const { return device_; }

  // Enqueue on `stream` (a stream of the backend the communicator was made
  // with, on its device). Throw taskgrid::Error with NCCL's message.
  void broadcast(void* data, size_t count, NcclType type, int root, Stream* stream);
  void allreduce(const void* send, void* recv, size_t count, NcclType type, NcclOp op,
                 Stream* stream);
  // "" while the communicator is healthy, else NCCL's asynchronous error (a
  // peer that failed, a network error); destroying it then aborts it.
  std::string async_error();

 private:
  friend class NcclLibrary;
  NcclCommunicator(const NcclLibrary& nccl, Backend& backend, void* handle, int device, int ranks,
                   int rank);
  const NcclLibrary& nccl_;
  Backend& backend_;
  void* handle_;
  int device_;
  int ranks_;
  int rank_;
  bool failed_ = false;
};

class NcclLibrary {
 public:
  ~NcclLibrary();  // the library stays loaded (communicators may outlive it at exit)
  NcclLibrary(const NcclLibrary&) = delete;
  NcclLibrary& operator=(const NcclLibrary&) = delete;

  // NCCL_VERSION_CODE of the loaded library (e.g. 22809) and as "2.28.9".
  int version() const { return version_; }
  std::string version_string() const;
  const std::string& path() const { return path_; }

  // A fresh unique id (on one rank; the caller hands it to the others).
  NcclUniqueId unique_id() const;
  // Collective over the `ranks` ranks sharing `id`: a communicator on
  // `device` of `backend` (a CUDA backend). Throws taskgrid::Error naming
  // NCCL's message.
  std::unique_ptr<NcclCommunicator> create_communicator(Backend& backend, int device, int ranks,
                                                        int rank, const NcclUniqueId& id) const;

  // NCCL's message for a result code, with the code.
  std::string error(int code) const;

 private:
  friend class NcclCommunicator;
  friend std::unique_ptr<NcclLibrary> open_nccl(const std::string& library, std::string& why);
  NcclLibrary() = default;
  void check(int code, const char* what) const;

  void* library_ = nullptr;
  std::string path_;
  int version_ = 0;
  int (*get_version_)(int*) = nullptr;
  int (*get_unique_id_)(NcclUniqueId*) = nullptr;
  int (*comm_init_rank_)(void**, int, NcclUniqueId, int) = nullptr;
  int (*comm_destroy_)(void*) = nullptr;
  int (*comm_abort_)(void*) = nullptr;
  int (*comm_get_async_error_)(void*, int*) = nullptr;
  int (*broadcast_)(const void*, void*, size_t, int, int, void*, void*) = nullptr;
  int (*allreduce_)(const void*, void*, size_t, int, int, void*, void*) = nullptr;
  const char* (*get_error_string_)(int) = nullptr;
};

// Loads NCCL from `library` (a path, or a name for the default search) and
// resolves its entry points; nullptr with `why` saying what is missing
// ("libnccl.so.2 not found: <dlerror>", a missing entry point, a version
// older than 2.4). Not cached: for tests and tools.
std::unique_ptr<NcclLibrary> open_nccl(const std::string& library, std::string& why);

// The process's NCCL (TASKGRID_NCCL_LIBRARY, else libnccl.so.2), loaded on
// the first call and kept; nullptr with `why` when it cannot be loaded (the
// same answer on every later call).
const NcclLibrary* process_nccl(std::string& why);

// "2.28.9" for NCCL_VERSION_CODE 22809 (and 2.8.4 for the old code 2804).
std::string nccl_version_string(int code);

}  // namespace taskgrid::device
