//===- CpuSupportTest.cpp - the CPU kernels' shared arithmetic ------------===//
//
// expNonPositive, softmax's exp: of eight lanes (Floats8) it gives, lane by
// lane, the bits it gives of one float, and both are within 2 ulp of exp
// down to where the result leaves the normal floats (0 below that, NaN for
// NaN).
//
//===----------------------------------------------------------------------===//

#include "cpu/CpuSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace tandem::rt::cpu;

namespace {

uint32_t bitsOf(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return bits;
}

/// Distance in units in the last place between two non-negative floats.
int64_t ulpsApart(float a, float b) {
  return std::llabs(int64_t(bitsOf(a)) - int64_t(bitsOf(b)));
}

std::vector<float> samples() {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               -1e-30f,
                               -0.5f,
                               -0.6931472f,
                               -1.0f,
                               -10.0f,
                               -87.33654f,
                               -87.3365447505531f,
                               -87.34f,
                               -88.0f,
                               -100.0f,
                               -std::numeric_limits<float>::max(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN()};
  for (float x = -90.0f; x <= 0.0f; x += 0.0137f)
    values.push_back(x);
  while (values.size() % 8)
    values.push_back(-2.0f);
  return values;
}

TEST(CpuSupportTest, ExpOfEightLanesGivesTheBitsOfEachLaneAlone) {
  std::vector<float> values = samples();
  for (size_t k = 0; k < values.size(); k += 8) {
    Floats8 lanes;
    std::memcpy(&lanes, &values[k], sizeof(lanes));
    Floats8 e = expNonPositive(lanes);
    for (int lane = 0; lane < 8; ++lane) {
      float alone = expNonPositive(values[k + lane]);
      EXPECT_EQ(bitsOf(e[lane]), bitsOf(alone))
          << "exp(" << values[k + lane] << "): " << e[lane] << " in a lane, "
          << alone << " alone";
    }
  }
}

TEST(CpuSupportTest, ExpIsWithinTwoUlpWhereItIsNormal) {
  for (float x : samples()) {
    float got = expNonPositive(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(got));
      continue;
    }
    double exact = std::exp(double(x));
    // Below the normal floats: 0 (at ln(FLT_MIN) rounded to a float, whose
    // exp falls just short of FLT_MIN, the subnormal it is).
    if (exact < double(std::numeric_limits<float>::min())) {
      EXPECT_TRUE(got == 0.0f || ulpsApart(got, float(exact)) <= 2)
          << "exp(" << x << ") = " << got << ", exactly " << exact;
      continue;
    }
    EXPECT_LE(ulpsApart(got, float(exact)), 2)
        << "exp(" << x << ") = " << got << ", exactly " << exact;
  }
}

} // namespace
