#include "resp/encoder.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <string>
#include <string_view>
#include <vector>

namespace distlock::resp {
namespace {

using namespace std::string_literals;

// The reference encoding, from hiredis.
std::string hiredis_encoding(const std::vector<std::string_view>& args) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  for (const std::string_view arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  char* command = nullptr;
  const int size =
      redisFormatCommandArgv(&command, static_cast<int>(args.size()), argv.data(), lengths.data());
  EXPECT_GE(size, 0);
  std::string encoded(command, static_cast<std::size_t>(size));
  redisFreeCommand(command);
  return encoded;
}

std::string ours(const std::vector<std::string_view>& args) {
  std::string out;
  encode_command(out, args);
  return out;
}

const std::string kLong(100000, 'x');
const std::string kBinary = "a\0b\r\n$3\r\n*\xff"s;

std::vector<std::vector<std::string_view>> argument_lists() {
  return {
      {"PING"},
      {"SET", "key", "value"},
      {"SET", "", ""},
      {""},
      {"SET", kBinary, kBinary},
      {"SET", "big", kLong},
      {"DEL", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11"},
      {"EVALSHA", "0123456789abcdef0123456789abcdef01234567", "1", "lock:{a}", "30000", "id:1"},
  };
}

TEST(Encoder, MatchesHiredisRedisFormatCommandArgvByteForByte) {
  for (const auto& args : argument_lists()) {
    EXPECT_EQ(ours(args), hiredis_encoding(args)) << testing::PrintToString(args);
  }
}

TEST(Encoder, EncodesACommandAsAnArrayOfBulkStrings) {
  EXPECT_EQ(ours({"SET", "k", ""}), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
}

TEST(Encoder, EncodesNoArgumentsAsAnEmptyArray) {
  EXPECT_EQ(ours({}), "*0\r\n");
  EXPECT_EQ(ours({}), hiredis_encoding({}));
}

TEST(Encoder, AppendsToWhatIsAlreadyInTheBuffer) {
  std::string out = "*1\r\n$4\r\nPING\r\n";
  encode_command(out, {"GET", "k"});
  EXPECT_EQ(out, "*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
}

TEST(Encoder, EncodedSizeIsTheNumberOfBytesAppended) {
  for (const auto& args : argument_lists()) {
    EXPECT_EQ(encoded_size(args), ours(args).size()) << testing::PrintToString(args);
  }
  EXPECT_EQ(encoded_size({}), 4u);
}

}  // namespace
}  // namespace distlock::resp
