// libFuzzer target of the control-batch decoder (scripts/fuzz.sh builds and
// runs it with clang). A rejected batch is a normal outcome, not a finding:
// only a crash, a sanitizer report or a leak is.
#include <cstddef>
#include <cstdint>

#include "fuzz/batch_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  taskgrid::fuzz::decode_input(data, size);
  return 0;
}
