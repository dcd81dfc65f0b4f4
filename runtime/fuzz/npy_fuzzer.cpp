// libFuzzer harness: any bytes are a valid error or a valid array.
#include "tandem/runtime/Npy.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tandem::rt::NpyArray array;
  std::string error;
  if (tandem::rt::parseNpy(data, size, array, error)) {
    // A parsed array holds exactly what its shape and dtype say.
    uint64_t count = tandem::rt::elementCount(array.shape).value_or(0);
    if (count * tandem::rt::dtypeSize(array.dtype) != array.data.size())
      std::abort();
  } else if (error.empty()) {
    std::abort();
  }
  return 0;
}
