// libFuzzer harness: any bytes are a valid error or tensors inside the input.
#include "tandem/runtime/Safetensors.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tandem::rt::SafetensorsFile file;
  std::string error;
  if (file.parse(data, size, error)) {
    for (const auto &[name, entry] : file.tensors()) {
      // Every tensor lies inside the input; touch its first and last byte.
      if (entry.bytes == 0)
        continue;
      if (entry.data < data || entry.data + entry.bytes > data + size)
        std::abort();
      volatile uint8_t first = entry.data[0], last = entry.data[entry.bytes - 1];
      (void)first;
      (void)last;
    }
  } else if (error.empty()) {
    std::abort();
  }
  return 0;
}
