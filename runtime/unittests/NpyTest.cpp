//===- NpyTest.cpp - the .npy reader and writer ---------------------------===//

#include "tandem/runtime/Npy.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace tandem::rt;

namespace {

/// An .npy file with a hand-written header (version 1.0) and `dataBytes`
/// bytes of data.
std::vector<uint8_t> npyWithHeader(const std::string &header,
                                   size_t dataBytes) {
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  bytes.push_back(header.size() & 0xff);
  bytes.push_back(header.size() >> 8);
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.resize(bytes.size() + dataBytes, 7);
  return bytes;
}

std::string errorOf(const std::vector<uint8_t> &bytes) {
  NpyArray array;
  std::string error;
  EXPECT_FALSE(parseNpy(bytes.data(), bytes.size(), array, error));
  return error;
}

TEST(NpyTest, RoundTripsEveryDType) {
  float f32[6] = {1, 2, 3, 4, 5, -6.5};
  int64_t i64[3] = {-1, 0, 1LL << 40};
  int32_t i32[2] = {7, -7};
  uint8_t b1[4] = {1, 0, 0, 1};
  uint16_t f16[2] = {0x3c00, 0xc000};
  struct Case {
    DType dtype;
    std::vector<int64_t> shape;
    const void *data;
  } cases[] = {{DType::F32, {2, 3}, f32}, {DType::I64, {3}, i64},
               {DType::I32, {2, 1}, i32}, {DType::Bool, {2, 2}, b1},
               {DType::F16, {2}, f16},    {DType::F32, {}, f32},
               {DType::F32, {0, 4}, f32}};
  for (const Case &c : cases) {
    std::vector<uint8_t> bytes = encodeNpy(c.dtype, c.shape, c.data);
    // Data starts 64-byte aligned, as NumPy writes it.
    EXPECT_EQ((bytes.size() - elementCount(c.shape).value() *
                                  dtypeSize(c.dtype)) %
                  64,
              0u);
    NpyArray array;
    std::string error;
    ASSERT_TRUE(parseNpy(bytes.data(), bytes.size(), array, error)) << error;
    EXPECT_EQ(array.dtype, c.dtype);
    EXPECT_EQ(array.shape, c.shape);
    ASSERT_EQ(array.data.size(),
              elementCount(c.shape).value() * dtypeSize(c.dtype));
    if (!array.data.empty()) {
      EXPECT_EQ(std::memcmp(array.data.data(), c.data, array.data.size()), 0);
    }
  }
}

TEST(NpyTest, ReadsWhatNumPyWrites) {
  // numpy.save of numpy.arange(6, dtype=numpy.int32).reshape(2, 3), v1.0,
  // and the same header in version 2.0 form.
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': "
                       "(2, 3), }";
  header.append(118 - header.size() - 1, ' ');
  header += '\n';
  std::vector<uint8_t> bytes = npyWithHeader(header, 0);
  for (int32_t i = 0; i < 6; ++i)
    bytes.insert(bytes.end(), reinterpret_cast<uint8_t *>(&i),
                 reinterpret_cast<uint8_t *>(&i) + 4);
  NpyArray array;
  std::string error;
  ASSERT_TRUE(parseNpy(bytes.data(), bytes.size(), array, error)) << error;
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(reinterpret_cast<int32_t *>(array.data.data())[5], 5);

  std::vector<uint8_t> v2 = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0};
  uint32_t length = header.size();
  v2.insert(v2.end(), reinterpret_cast<uint8_t *>(&length),
            reinterpret_cast<uint8_t *>(&length) + 4);
  v2.insert(v2.end(), header.begin(), header.end());
  v2.insert(v2.end(), bytes.end() - 24, bytes.end());
  ASSERT_TRUE(parseNpy(v2.data(), v2.size(), array, error)) << error;
}

TEST(NpyTest, RejectsWhatItCannotRepresent) {
  EXPECT_NE(errorOf({'P', 'K', 3, 4}).find("no \\x93NUMPY magic"),
            std::string::npos);
  EXPECT_NE(errorOf(npyWithHeader("{'descr': '<f8', 'fortran_order': False, "
                                  "'shape': (2,), }\n",
                                  16))
                .find("unsupported dtype '<f8'"),
            std::string::npos);
  EXPECT_NE(errorOf(npyWithHeader("{'descr': '>f4', 'fortran_order': False, "
                                  "'shape': (2,), }\n",
                                  8))
                .find("big-endian"),
            std::string::npos);
  EXPECT_NE(errorOf(npyWithHeader("{'descr': '<f4', 'fortran_order': True, "
                                  "'shape': (2, 2), }\n",
                                  16))
                .find("Fortran-order"),
            std::string::npos);
  EXPECT_NE(errorOf(npyWithHeader("{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (2, -1), }\n",
                                  8))
                .find("non-negative integers"),
            std::string::npos);
  EXPECT_NE(errorOf(npyWithHeader("{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (99999999999, 99999999999, "
                                  "99999999999), }\n",
                                  0))
                .find("too large"),
            std::string::npos);
}

// Found by a hostile tester: an integer where a tuple belongs, control
// bytes echoed into a message, a file of only the magic called "no magic".
TEST(NpyTest, NamesMalformedHeadersPrecisely) {
  EXPECT_EQ(errorOf(npyWithHeader("{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (4), }\n",
                                  16)),
            "'shape' (4) is not a tuple: one dimension is written (4,)");
  std::string withNul = std::string("{'descr': '<f") + '\0' +
                        "', 'fortran_order': False, 'shape': (2,), }\n";
  EXPECT_NE(errorOf(npyWithHeader(withNul, 8)).find("unsupported dtype '<f\\x00'"),
            std::string::npos);
  EXPECT_EQ(errorOf({0x93, 'N', 'U', 'M', 'P', 'Y', 1}),
            "the file is cut short inside its preamble");
  // A one-element tuple and the empty tuple (a scalar) are read.
  NpyArray array;
  std::string error;
  std::vector<uint8_t> bytes = npyWithHeader(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }\n", 16);
  ASSERT_TRUE(parseNpy(bytes.data(), bytes.size(), array, error)) << error;
  EXPECT_EQ(array.shape, std::vector<int64_t>{4});
  bytes = npyWithHeader(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n", 4);
  ASSERT_TRUE(parseNpy(bytes.data(), bytes.size(), array, error)) << error;
  EXPECT_TRUE(array.shape.empty());
}

TEST(NpyTest, RejectsTruncatedAndPaddedFiles) {
  float data[4] = {1, 2, 3, 4};
  std::vector<uint8_t> bytes = encodeNpy(DType::F32, {4}, data);
  std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 3);
  EXPECT_NE(errorOf(cut).find("the data is cut short: [4] f32 needs 16 bytes, "
                              "the file has 13"),
            std::string::npos);
  std::vector<uint8_t> header(bytes.begin(), bytes.begin() + 20);
  EXPECT_NE(errorOf(header).find("cut short inside its header"),
            std::string::npos);
  std::vector<uint8_t> extra = bytes;
  extra.push_back(0);
  EXPECT_NE(errorOf(extra).find("1 bytes after the data"), std::string::npos);
  for (size_t length = 0; length < bytes.size(); ++length) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + length);
    EXPECT_FALSE(errorOf(prefix).empty()) << length;
  }
}

TEST(NpyTest, FilesOnDisk) {
  std::string path = ::testing::TempDir() + "/tandem-npy-test.npy";
  int64_t data[2] = {3, 4};
  std::string error;
  ASSERT_TRUE(writeNpy(path, DType::I64, {2}, data, error)) << error;
  NpyArray array;
  ASSERT_TRUE(readNpy(path, array, error)) << error;
  EXPECT_EQ(array.dtype, DType::I64);
  EXPECT_FALSE(readNpy(path + ".missing", array, error));
  EXPECT_NE(error.find("cannot open"), std::string::npos);
  EXPECT_NE(error.find(".missing"), std::string::npos);
  EXPECT_FALSE(writeNpy(path, DType::BF16, {2}, data, error));
  EXPECT_NE(error.find("NumPy has no such dtype"), std::string::npos);
}

} // namespace
