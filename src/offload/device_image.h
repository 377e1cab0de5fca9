// Device images on a device rank: each image of the program (an x86_64 ELF
// shared object inside the executable) loaded from this rank's own copy of
// the executable, and its kernels and globals looked up by name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "offload/omptarget_abi.h"

namespace taskgrid::offload {

// The executable image inside a registered one: clang's offload packager
// wraps each image in an "offload binary" (magic 10 ff 10 ad) that
// libomptarget unwraps before it hands the image to a plugin; an image that
// is not wrapped is returned as it is.
__tgt_device_image executable_image(const __tgt_device_image& registered);

// FNV-1a of an image's bytes: the head and a device rank check that they
// mean the same image by index and hash, without sending it.
uint64_t image_hash(const __tgt_device_image& image);

// Whether libomptarget should give this image to the plugin: an x86_64
// ELF shared object.
bool is_x86_64_shared_object(const __tgt_device_image& image);

class LoadedImages {
 public:
  LoadedImages() = default;
  LoadedImages(const LoadedImages&) = delete;
  LoadedImages& operator=(const LoadedImages&) = delete;
  // Images stay loaded until the process ends (their code may still run
  // from atexit handlers), so there is no destructor that unloads them.

  // Loads every image of `desc` (throws std::runtime_error naming the image
  // and the loader's message).
  void load(const __tgt_bin_desc& desc);
  // Loads image `index` from bytes rank 0 sent (a device server, which runs
  // no copy of the program).
  void load_sent(size_t index, const void* bytes, size_t size);
  // Whether image `index` is loaded here.
  bool has(size_t image) const { return image < images_.size() && images_[image].handle; }
  uint64_t hash(size_t image) const { return images_.at(image).hash; }
  // The address of `name` in image `image`, or nullptr.
  void* symbol(size_t image, const char* name) const;

 private:
  struct Loaded {
    void* handle = nullptr;
    uint64_t hash = 0;
  };
  std::vector<Loaded> images_;
};

}  // namespace taskgrid::offload
