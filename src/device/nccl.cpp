#include "device/nccl.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <type_traits>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::device {
namespace {

// NCCL's result codes and enumerations that the calls below use (nccl.h's
// values; results are ints, 0 is success).
constexpr int kSuccess = 0;
constexpr int kOldestVersion = 2400;  // ncclCommGetAsyncError came with 2.4

int nccl_type(NcclType type) {
  switch (type) {
    case NcclType::int32:
      return 2;
    case NcclType::uint32:
      return 3;
    case NcclType::int64:
      return 4;
    case NcclType::uint64:
      return 5;
    case NcclType::float32:
      return 7;
    case NcclType::float64:
      return 8;
  }
  throw Error("NCCL: unknown data type " + std::to_string(static_cast<int>(type)));
}

int nccl_op(NcclOp op) {
  switch (op) {
    case NcclOp::sum:
      return 0;
    case NcclOp::prod:
      return 1;
    case NcclOp::max:
      return 2;
    case NcclOp::min:
      return 3;
  }
  throw Error("NCCL: unknown reduction " + std::to_string(static_cast<int>(op)));
}

}  // namespace

std::string nccl_version_string(int code) {
  // NCCL_VERSION(X, Y, Z): X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z since 2.9.
  const bool old = code < 10000;
  const int major = old ? code / 1000 : code / 10000;
  const int minor = old ? code % 1000 / 100 : code % 10000 / 100;
  const int patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::unique_ptr<NcclLibrary> open_nccl(const std::string& library, std::string& why) {
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* reason = dlerror();
    why = library + " not found: " + (reason ? reason : "dlopen failed");
    return nullptr;
  }
  std::unique_ptr<NcclLibrary> nccl(new NcclLibrary());
  nccl->library_ = handle;
  nccl->path_ = library;
  bool complete = true;
  auto resolve = [&](auto& entry, const char* symbol) {
    entry = reinterpret_cast<std::remove_reference_t<decltype(entry)>>(dlsym(handle, symbol));
    if (!entry && complete) {
      why = library + " has no " + symbol + " (not NCCL 2.4 or later?)";
      complete = false;
    }
  };
  resolve(nccl->get_version_, "ncclGetVersion");
  resolve(nccl->get_unique_id_, "ncclGetUniqueId");
  resolve(nccl->comm_init_rank_, "ncclCommInitRank");
  resolve(nccl->comm_destroy_, "ncclCommDestroy");
  resolve(nccl->comm_abort_, "ncclCommAbort");
  resolve(nccl->comm_get_async_error_, "ncclCommGetAsyncError");
  resolve(nccl->broadcast_, "ncclBroadcast");
  resolve(nccl->allreduce_, "ncclAllReduce");
  resolve(nccl->get_error_string_, "ncclGetErrorString");
  if (complete) {
    const int code = nccl->get_version_(&nccl->version_);
    if (code != kSuccess) {
      why = library + ": ncclGetVersion failed: " + nccl->error(code);
      complete = false;
    } else if (nccl->version_ < kOldestVersion) {
      why = library + " is NCCL " + nccl_version_string(nccl->version_) +
            "; TaskGrid needs NCCL 2.4 or later";
      complete = false;
    }
  }
  if (!complete) {
    nccl->library_ = nullptr;
    dlclose(handle);
    return nullptr;
  }
  return nccl;
}

const NcclLibrary* process_nccl(std::string& why) {
  static std::once_flag once;
  static std::unique_ptr<NcclLibrary> nccl;
  static std::string reason;
  std::call_once(once, [] {
    const char* setting = std::getenv("TASKGRID_NCCL_LIBRARY");
    const std::string library = setting && *setting ? setting : "libnccl.so.2";
    nccl = open_nccl(library, reason);
  });
  if (!nccl) why = reason;
  return nccl.get();
}

NcclLibrary::~NcclLibrary() {
  // Not unloaded: NCCL's own threads and exit handlers may still run.
}

std::string NcclLibrary::version_string() const { return nccl_version_string(version_); }

std::string NcclLibrary::error(int code) const {
  const char* text = get_error_string_ ? get_error_string_(code) : nullptr;
  return text ? std::string(text) + " (" + std::to_string(code) + ")"
              : "NCCL error " + std::to_string(code);
}

void NcclLibrary::check(int code, const char* what) const {
  if (code != kSuccess) throw Error(std::string("NCCL: ") + what + " failed: " + error(code));
}

NcclUniqueId NcclLibrary::unique_id() const {
  NcclUniqueId id;
  check(get_unique_id_(&id), "ncclGetUniqueId");
  return id;
}

std::unique_ptr<NcclCommunicator> NcclLibrary::create_communicator(Backend& backend, int device,
                                                                   int ranks, int rank,
                                                                   const NcclUniqueId& id) const {
  if (std::string(backend.name()) != "cuda")
    throw Error(std::string("NCCL: a communicator needs the cuda device backend, not ") +
                backend.name());
  backend.make_current(device);  // NCCL binds the communicator to the current device
  void* handle = nullptr;
  check(comm_init_rank_(&handle, ranks, id, rank), "ncclCommInitRank");
  return std::unique_ptr<NcclCommunicator>(
      new NcclCommunicator(*this, backend, handle, device, ranks, rank));
}

NcclCommunicator::NcclCommunicator(const NcclLibrary& nccl, Backend& backend, void* handle,
                                   int device, int ranks, int rank)
    : nccl_(nccl),
      backend_(backend),
      handle_(handle),
      device_(device),
      ranks_(ranks),
      rank_(rank) {}

NcclCommunicator::~NcclCommunicator() {
  if (!handle_) return;
  try {
    backend_.make_current(device_);
  } catch (const Error&) {
    // Tearing down after a device failure: abort below still frees the communicator.
    failed_ = true;
  }
  if (failed_)
    nccl_.comm_abort_(handle_);
  else
    nccl_.comm_destroy_(handle_);
}

void NcclCommunicator::broadcast(void* data, size_t count, NcclType type, int root,
                                 Stream* stream) {
  backend_.make_current(device_);
  const int code = nccl_.broadcast_(data, data, count, nccl_type(type), root, handle_,
                                    backend_.native_stream(stream));
  if (code != kSuccess) failed_ = true;
  nccl_.check(code, "ncclBroadcast");
}

void NcclCommunicator::allreduce(const void* send, void* recv, size_t count, NcclType type,
                                 NcclOp op, Stream* stream) {
  backend_.make_current(device_);
  const int code = nccl_.allreduce_(send, recv, count, nccl_type(type), nccl_op(op), handle_,
                                    backend_.native_stream(stream));
  if (code != kSuccess) failed_ = true;
  nccl_.check(code, "ncclAllReduce");
}

std::string NcclCommunicator::async_error() {
  int result = kSuccess;
  const int code = nccl_.comm_get_async_error_(handle_, &result);
  if (code != kSuccess) result = code;
  if (result == kSuccess || result == 7 /* ncclInProgress: still being set up */) return "";
  failed_ = true;
  return nccl_.error(result);
}

}  // namespace taskgrid::device
