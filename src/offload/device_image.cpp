#include "offload/device_image.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace taskgrid::offload {

namespace {

size_t image_bytes(const __tgt_device_image& image) {
  return static_cast<size_t>(static_cast<const char*>(image.ImageEnd) -
                             static_cast<const char*>(image.ImageStart));
}

// dlopen needs a file: the image goes into an anonymous memory file, which
// the loader maps like any shared object.
void* load_from_memory(const void* bytes, size_t size, size_t index) {
  const std::string name = "taskgrid-offload-image-" + std::to_string(index);
  const int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0)
    throw std::runtime_error("device image " + std::to_string(index) +
                             ": memfd_create failed: " + std::strerror(errno));
  size_t written = 0;
  while (written < size) {
    const ssize_t n = write(fd, static_cast<const char*>(bytes) + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      close(fd);
      throw std::runtime_error("device image " + std::to_string(index) +
                               ": cannot write it to a memory file: " + std::strerror(error));
    }
    written += static_cast<size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  // The mapping keeps the file alive; the descriptor is not needed any more.
  close(fd);
  if (!handle)
    throw std::runtime_error("device image " + std::to_string(index) +
                             ": cannot load it: " + dlerror());
  return handle;
}

// The offload binary's layout (LLVM's OffloadBinary, version 1): a header,
// then entries; only the first entry's image is used, as libomptarget does.
struct OffloadBinaryHeader {
  uint8_t magic[4];
  uint32_t version;
  uint64_t size;
  uint64_t entry_offset;
  uint64_t entry_size;
};
struct OffloadBinaryEntry {
  uint16_t image_kind;
  uint16_t offload_kind;
  uint32_t flags;
  uint64_t string_offset;
  uint64_t strings;
  uint64_t image_offset;
  uint64_t image_size;
};
constexpr uint8_t kOffloadBinaryMagic[4] = {0x10, 0xff, 0x10, 0xad};

}  // namespace

__tgt_device_image executable_image(const __tgt_device_image& registered) {
  const size_t size = image_bytes(registered);
  const auto* bytes = static_cast<const char*>(registered.ImageStart);
  OffloadBinaryHeader header;
  if (size < sizeof header) return registered;
  std::memcpy(&header, bytes, sizeof header);
  if (std::memcmp(header.magic, kOffloadBinaryMagic, sizeof header.magic) != 0) return registered;
  OffloadBinaryEntry entry;
  if (header.entry_offset > size || size - header.entry_offset < sizeof entry) return registered;
  std::memcpy(&entry, bytes + header.entry_offset, sizeof entry);
  if (entry.image_offset > size || size - entry.image_offset < entry.image_size) return registered;
  __tgt_device_image image = registered;
  image.ImageStart = const_cast<char*>(bytes + entry.image_offset);
  image.ImageEnd = const_cast<char*>(bytes + entry.image_offset + entry.image_size);
  return image;
}

uint64_t image_hash(const __tgt_device_image& image) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  const auto* bytes = static_cast<const unsigned char*>(image.ImageStart);
  const size_t size = image_bytes(image);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

bool is_x86_64_shared_object(const __tgt_device_image& image) {
  if (image_bytes(image) < sizeof(Elf64_Ehdr)) return false;
  Elf64_Ehdr header;
  std::memcpy(&header, image.ImageStart, sizeof header);
  return std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 &&
         header.e_ident[EI_CLASS] == ELFCLASS64 && header.e_machine == EM_X86_64 &&
         header.e_type == ET_DYN;
}

void LoadedImages::load(const __tgt_bin_desc& desc) {
  for (int32_t i = 0; i < desc.NumDeviceImages; ++i) {
    const __tgt_device_image image = executable_image(desc.DeviceImages[i]);
    const size_t index = images_.size();
    // Other targets' images (nvptx, ...) keep their place in the numbering.
    void* handle = is_x86_64_shared_object(image)
                       ? load_from_memory(image.ImageStart, image_bytes(image), index)
                       : nullptr;
    images_.push_back({handle, image_hash(image)});
  }
}

void LoadedImages::load_sent(size_t index, const void* bytes, size_t size) {
  if (images_.size() <= index) images_.resize(index + 1);
  if (images_[index].handle) return;
  const __tgt_device_image image{const_cast<void*>(bytes),
                                 const_cast<char*>(static_cast<const char*>(bytes) + size), nullptr,
                                 nullptr};
  if (!is_x86_64_shared_object(image))
    throw std::runtime_error("device image " + std::to_string(index) +
                             " is not an x86_64 shared object");
  images_[index] = {load_from_memory(bytes, size, index), image_hash(image)};
}

void* LoadedImages::symbol(size_t image, const char* name) const {
  if (!has(image)) return nullptr;
  return dlsym(images_[image].handle, name);
}

}  // namespace taskgrid::offload
