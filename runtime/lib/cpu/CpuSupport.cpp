//===- CpuSupport.cpp - what the CPU kernel families share ----------------===//
//
// The out-of-line half of CpuSupport.h: the f16/bf16 conversions, element
// loads and stores of any type, and the message for an unsupported type.
//
//===----------------------------------------------------------------------===//

#include "CpuSupport.h"

#include <cstring>
#include <mutex>

using namespace tandem::rt;
using namespace tandem::rt::cpu;

bool cpu::unsupported(DType dtype, std::string &error) {
  error = std::string("no CPU kernel for this op on ") + dtypeName(dtype);
  return false;
}

//===----------------------------------------------------------------------===//
// Scratch memory
//===----------------------------------------------------------------------===//

namespace {
struct ScratchBuffer {
  std::unique_ptr<float[]> data;
  size_t size = 0;
};
// Taken at the start and end of every chunk of a loop that uses scratch:
// a spin lock (ThreadPool.h).
SpinLock scratchLock;
std::vector<ScratchBuffer> freeScratch;
} // namespace

cpu::Scratch::Scratch(size_t count) {
  {
    std::lock_guard<SpinLock> lock(scratchLock);
    // The largest waiting buffer: the one most likely to need no growing.
    auto largest =
        std::max_element(freeScratch.begin(), freeScratch.end(),
                         [](const ScratchBuffer &a, const ScratchBuffer &b) {
                           return a.size < b.size;
                         });
    if (largest != freeScratch.end()) {
      data = std::move(largest->data);
      size = largest->size;
      freeScratch.erase(largest);
    }
  }
  if (size < count) {
    data.reset(); // the old one first: never both at once
    data.reset(new float[count]);
    size = count;
  }
}

cpu::Scratch::~Scratch() {
  std::lock_guard<SpinLock> lock(scratchLock);
  freeScratch.push_back({std::move(data), size});
}

void tandem::rt::releaseScratch() {
  std::lock_guard<SpinLock> lock(scratchLock);
  freeScratch.clear();
}

//===----------------------------------------------------------------------===//
// f16 and bf16
//===----------------------------------------------------------------------===//

float cpu::halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exponent = (h >> 10) & 0x1f,
           mantissa = h & 0x3ff, bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else { // subnormal: normalize
      exponent = 127 - 15 + 1;
      while (!(mantissa & 0x400)) {
        mantissa <<= 1;
        --exponent;
      }
      bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
    }
  } else if (exponent == 31) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t cpu::floatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t sign = (bits >> 16) & 0x8000;
  uint32_t exponent = (bits >> 23) & 0xff, mantissa = bits & 0x7fffff;
  if (exponent == 0xff) // inf or nan
    return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  int32_t e = int32_t(exponent) - 127 + 15;
  if (e >= 31)
    return sign | 0x7c00;
  if (e <= 0) { // subnormal or zero, round to nearest even
    if (e < -10)
      return sign;
    mantissa |= 0x800000;
    uint32_t shift = 14 - e;
    uint32_t value = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (value & 1)))
      ++value;
    return sign | value;
  }
  uint32_t value = (uint32_t(e) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (value & 1)))
    ++value; // may carry into the exponent: still correct
  return sign | value;
}

float cpu::bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t cpu::floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return (bits >> 16) | 0x40; // quiet nan
  bits += 0x7fff + ((bits >> 16) & 1);
  return bits >> 16;
}

//===----------------------------------------------------------------------===//
// Elements of any type
//===----------------------------------------------------------------------===//

double cpu::loadDouble(DType dtype, const void *data, uint64_t i) {
  switch (dtype) {
  case DType::F32: return static_cast<const float *>(data)[i];
  case DType::F16: return halfToFloat(static_cast<const uint16_t *>(data)[i]);
  case DType::BF16: return bf16ToFloat(static_cast<const uint16_t *>(data)[i]);
  case DType::I64: return double(static_cast<const int64_t *>(data)[i]);
  case DType::I32: return static_cast<const int32_t *>(data)[i];
  case DType::Bool: return static_cast<const uint8_t *>(data)[i] != 0;
  }
  return 0;
}

void cpu::storeDouble(DType dtype, void *data, uint64_t i, double value) {
  switch (dtype) {
  case DType::F32: static_cast<float *>(data)[i] = float(value); break;
  case DType::F16: static_cast<uint16_t *>(data)[i] = floatToHalf(float(value)); break;
  case DType::BF16: static_cast<uint16_t *>(data)[i] = floatToBf16(float(value)); break;
  case DType::I64: static_cast<int64_t *>(data)[i] = floatToInteger<int64_t>(value); break;
  case DType::I32: static_cast<int32_t *>(data)[i] = floatToInteger<int32_t>(value); break;
  case DType::Bool: static_cast<uint8_t *>(data)[i] = value != 0; break;
  }
}
