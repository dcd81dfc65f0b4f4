//===- SafetensorsTest.cpp - the safetensors reader -----------------------===//

#include "tandem/runtime/Safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

using namespace tandem::rt;

namespace {

/// A file with a hand-written JSON header and `data`.
std::vector<uint8_t> withHeader(const std::string &header,
                                const std::vector<uint8_t> &data) {
  std::vector<uint8_t> bytes(8);
  for (int i = 0; i < 8; ++i)
    bytes[i] = (uint64_t(header.size()) >> (8 * i)) & 0xff;
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::string errorOf(const std::vector<uint8_t> &bytes) {
  SafetensorsFile file;
  std::string error;
  EXPECT_FALSE(file.parse(bytes.data(), bytes.size(), error));
  return error;
}

TEST(SafetensorsTest, RoundTrip) {
  float weight[6] = {1, 2, 3, 4, 5, 6};
  int64_t ids[2] = {9, 10};
  uint16_t half[1] = {0x3c00};
  std::vector<uint8_t> bytes =
      encodeSafetensors({{"fc.weight", DType::F32, {2, 3}, weight},
                         {"ids", DType::I64, {2}, ids},
                         {"scale", DType::BF16, {}, half}});
  SafetensorsFile file;
  std::string error;
  ASSERT_TRUE(file.parse(bytes.data(), bytes.size(), error)) << error;
  ASSERT_EQ(file.tensors().size(), 3u);
  const SafetensorsEntry *entry = file.find("fc.weight");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->dtype, DType::F32);
  EXPECT_EQ(entry->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::memcmp(entry->data, weight, sizeof(weight)), 0);
  EXPECT_EQ(file.find("ids")->bytes, 16u);
  EXPECT_TRUE(file.find("scale")->shape.empty());
  EXPECT_FALSE(file.find("missing"));
}

TEST(SafetensorsTest, ReadsTheFormatAsPyTorchWritesIt) {
  // As safetensors.torch.save_file writes it: metadata, other key order,
  // spaces, an empty tensor.
  std::string header =
      R"({"__metadata__": {"format": "pt"}, "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]},)"
      R"( "a": {"data_offsets": [0, 8], "shape": [2], "dtype": "I32"}, "e": {"dtype": "F16", "shape": [0, 3], "data_offsets": [12, 12]}})";
  std::vector<uint8_t> data(12, 0);
  SafetensorsFile file;
  std::string error;
  std::vector<uint8_t> bytes = withHeader(header, data);
  ASSERT_TRUE(file.parse(bytes.data(), bytes.size(), error)) << error;
  EXPECT_EQ(file.metadata().at("format"), "pt");
  EXPECT_EQ(file.find("a")->dtype, DType::I32);
  EXPECT_EQ(file.find("e")->bytes, 0u);
}

TEST(SafetensorsTest, RejectsCorruptFiles) {
  std::vector<uint8_t> data(16, 0);
  EXPECT_NE(errorOf({1, 2, 3}).find("fewer than the 8-byte header length"),
            std::string::npos);
  std::vector<uint8_t> huge = withHeader("{}", data);
  huge[0] = 0xff;
  huge[5] = 0x7f;
  EXPECT_NE(errorOf(huge).find("does not fit in the file"), std::string::npos);
  EXPECT_NE(errorOf(withHeader("{\"a\": ", data)).find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(errorOf(withHeader("[1, 2]", data)).find("not a JSON object"),
            std::string::npos);
  EXPECT_NE(errorOf(withHeader(R"({"w": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]}})", data))
                .find("tensor 'w' has dtype 'F64', which Tandem does not support"),
            std::string::npos);
  EXPECT_NE(errorOf(withHeader(R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 16]}})", data))
                .find("tensor 'w' is [2, 3] F32 but its data_offsets span 16 bytes"),
            std::string::npos);
  EXPECT_NE(errorOf(withHeader(R"({"w": {"dtype": "F32", "shape": [8], "data_offsets": [0, 32]}})", data))
                .find("ends at byte 32 of a data section of 16 bytes"),
            std::string::npos);
  EXPECT_NE(errorOf(withHeader(R"({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", data))
                .find("no 'shape' list of non-negative integers"),
            std::string::npos);
  EXPECT_NE(errorOf(withHeader(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})", data))
                .find("begin <= end"),
            std::string::npos);
  EXPECT_NE(errorOf(withHeader(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", data))
                .find("appears twice"),
            std::string::npos);
  // Nesting deep enough to blow a naive recursive parser's stack.
  std::string deep(100000, '[');
  EXPECT_NE(errorOf(withHeader(deep, data)).find("nested too deeply"),
            std::string::npos);
}

TEST(SafetensorsTest, EveryTruncationIsAnError) {
  float weight[4] = {1, 2, 3, 4};
  std::vector<uint8_t> bytes =
      encodeSafetensors({{"w", DType::F32, {4}, weight}});
  for (size_t length = 0; length < bytes.size(); ++length) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + length);
    EXPECT_FALSE(errorOf(prefix).empty()) << length;
  }
}

TEST(SafetensorsTest, MapsFilesFromDisk) {
  std::string path = ::testing::TempDir() + "/tandem-weights-test.safetensors";
  float weight[3] = {0.5, 1.5, 2.5};
  std::vector<uint8_t> bytes =
      encodeSafetensors({{"w", DType::F32, {3}, weight}});
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  SafetensorsFile file;
  std::string error;
  ASSERT_TRUE(file.open(path, error)) << error;
  EXPECT_EQ(reinterpret_cast<const float *>(file.find("w")->data)[2], 2.5f);
  SafetensorsFile moved = std::move(file);
  EXPECT_EQ(reinterpret_cast<const float *>(moved.find("w")->data)[1], 1.5f);
  EXPECT_FALSE(file.open(path + ".missing", error));
  EXPECT_NE(error.find("cannot open"), std::string::npos);
  EXPECT_FALSE(file.open(::testing::TempDir(), error));
  EXPECT_NE(error.find("is not a regular file"), std::string::npos);
}

} // namespace
