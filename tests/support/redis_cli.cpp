#include "support/redis_cli.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "support/process.hpp"

namespace distlock::test {
namespace {

constexpr std::chrono::seconds kCliBound{10};

// Double-quoted for redis-cli's line parser (sdssplitargs).
std::string quoted(const std::string& arg) {
  std::string result = "\"";
  for (const char c : arg) {
    if (c == '"' || c == '\\') result += '\\';
    result += c;
  }
  return result + "\"";
}

}  // namespace

std::string cli(std::uint16_t port, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"redis-cli", "-h", "127.0.0.1", "-p", std::to_string(port)};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string output = run_capture(argv, kCliBound);
  if (!output.empty() && output.back() == '\n') output.pop_back();
  return output;
}

std::string cli_session(std::uint16_t port, const std::vector<std::vector<std::string>>& commands) {
  // ChildProcess gives children /dev/null as stdin, so a shell redirects the
  // commands from a file.
  std::string path = "/tmp/distlock-cli-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) throw std::runtime_error("mkstemp " + path);
  ::close(fd);
  {
    std::ofstream file(path);
    for (const auto& command : commands) {
      for (const auto& arg : command) file << quoted(arg) << ' ';
      file << '\n';
    }
  }
  std::string output;
  try {
    output = run_capture(
        {"sh", "-c", "exec redis-cli -h 127.0.0.1 -p \"$0\" < \"$1\"", std::to_string(port), path},
        kCliBound);
  } catch (...) {
    ::unlink(path.c_str());
    throw;
  }
  ::unlink(path.c_str());
  if (!output.empty() && output.back() == '\n') output.pop_back();
  return output;
}

}  // namespace distlock::test
