#include "device/backend.h"

#include <unistd.h>

#include <new>

#include "device/cuda_backend.h"
#include "device/emulated_backend.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::device {

void* Backend::allocate_staging(size_t bytes) {
  return ::operator new (bytes ? bytes : 1, std::align_val_t{64});
}

void Backend::release_staging(void* pointer) { ::operator delete (pointer, std::align_val_t{64}); }

std::string Backend::device_identity(int device) const {
  // A backend whose devices belong to the process: its pid tells them apart.
  return std::string(name()) + " device " + std::to_string(device) + " of process " +
         std::to_string(static_cast<long>(getpid()));
}

std::optional<BackendKind> find_backend_kind(std::string_view name) {
  for (BackendKind kind :
       {BackendKind::none, BackendKind::emulated, BackendKind::cuda, BackendKind::automatic})
    if (name == backend_kind_name(kind)) return kind;
  return std::nullopt;
}

BackendKind parse_backend_kind(const std::string& value) {
  if (const std::optional<BackendKind> kind = find_backend_kind(value)) return *kind;
  throw Error("TASKGRID_DEVICE=" + value + ": not a device backend (none, emulated, cuda or auto)");
}

const char* backend_kind_name(BackendKind kind) {
  switch (kind) {
    case BackendKind::none:
      return "none";
    case BackendKind::emulated:
      return "emulated";
    case BackendKind::cuda:
      return "cuda";
    case BackendKind::automatic:
      return "auto";
  }
  return "?";
}

std::unique_ptr<Backend> open_backend(const BackendSettings& settings) {
  switch (settings.kind) {
    case BackendKind::none:
      return nullptr;
    case BackendKind::emulated:
      return std::make_unique<EmulatedBackend>(settings.emulated_devices, settings.memory_limit);
    case BackendKind::cuda:
    case BackendKind::automatic: {
      std::string why;
      std::unique_ptr<Backend> cuda = open_cuda_backend(settings.memory_limit, why);
      if (!cuda && settings.kind == BackendKind::cuda)
        throw Error("TASKGRID_DEVICE=cuda, but " + why);
      return cuda;  // auto: nullptr when no GPU is usable
    }
  }
  return nullptr;
}

}  // namespace taskgrid::device
