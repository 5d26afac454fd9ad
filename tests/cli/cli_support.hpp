// Running the distlock tool from the cli tests: each test gets a scratch
// directory; every run's stdout and stderr go to files there.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock::test {

// One distlock process started by a test.
struct ToolRun {
  ChildProcess process;
  std::string out_path;
  std::string err_path;
};

// What a finished run did. status is the exit code, or -1 when it did not
// exit within the bound (it is then killed).
struct ToolResult {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline bool file_exists(const std::string& path) {
  return std::ifstream(path).good();
}

inline void touch(const std::string& path) {
  std::ofstream(path) << "";
}

class CliTest {
 public:
  CliTest() : dir_(make_temp_dir("distlock-cli-")) {}
  // Removes the scratch directory; never throws (a destructor).
  ~CliTest() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // A path inside the scratch directory.
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  // Starts `distlock args...` (cwd unchanged; use path() for files).
  ToolRun start(const std::vector<std::string>& args, const EnvVars& env = {}) {
    const std::string stem = path("run" + std::to_string(++runs_));
    std::vector<std::string> argv{DISTLOCK_TOOL};
    argv.insert(argv.end(), args.begin(), args.end());
    SpawnOptions options;
    options.env = env;
    ToolRun run{{}, stem + ".out", stem + ".err"};
    out_fd(run.out_path, options.stdout_fd);
    out_fd(run.err_path, options.stderr_fd);
    run.process = ChildProcess::spawn(argv, options);
    close_fds(options);
    return run;
  }

  // Waits (at most `bound`) for a started run to exit.
  static ToolResult finish(ToolRun& run,
                           std::chrono::milliseconds bound = std::chrono::seconds(60)) {
    ToolResult result;
    const auto status = run.process.wait_for_exit(bound);
    if (!status) {
      run.process.kill_and_reap();
    } else if (WIFEXITED(*status)) {
      result.status = WEXITSTATUS(*status);
    } else {
      result.status = 1000 + WTERMSIG(*status);  // distlock itself was killed
    }
    result.out = read_file(run.out_path);
    result.err = read_file(run.err_path);
    return result;
  }

  ToolResult run(const std::vector<std::string>& args,
                 const EnvVars& env = {},
                 std::chrono::milliseconds bound = std::chrono::seconds(60)) {
    ToolRun r = start(args, env);
    return finish(r, bound);
  }

  // A shell command that appends "start" to `log`, waits for the file `gate`
  // (when given), then appends "end". The order of the lines is the order of
  // the events: no clock is needed to tell an overlap.
  std::string recorded(const std::string& log, const std::string& gate = "") const {
    std::string body = "echo start >> " + log + "; ";
    if (!gate.empty()) body += wait_for(gate);
    return body + "echo end >> " + log;
  }

  // A shell loop that waits until `file` (in the scratch directory) exists.
  // It also ends when the scratch directory is removed, so a command left
  // running by a failed test ends with the test.
  std::string wait_for(const std::string& file) const {
    return "while [ ! -e " + file + " ] && [ -d " + dir_ + " ]; do sleep 0.02; done; ";
  }

 private:
  static void out_fd(const std::string& file, int& fd) {
    fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  }
  static void close_fds(const SpawnOptions& options) {
    ::close(options.stdout_fd);
    ::close(options.stderr_fd);
  }

  std::string dir_;
  int runs_ = 0;
};

// Subscribers of `channel` (PUBSUB NUMSUB): each waiting process subscribes
// once, however many threads wait.
inline long long subscribers(const RedisServer& server, const std::string& channel) {
  std::istringstream in(server.cli({"PUBSUB", "NUMSUB", channel}));
  std::string name;
  long long n = 0;
  in >> name >> n;
  return n;
}

// The script calls (EVALSHA) the server has run so far. A waiter that started
// after `before` calls, is subscribed and has made `before + 2` (its first
// attempt and the one after subscribing) is settled: from then on only a
// message, or its fallback retry, wakes it.
inline long long script_calls(const RedisServer& server) {
  const std::string stats = server.cli({"INFO", "commandstats"});
  const std::string field = "cmdstat_evalsha:calls=";
  const auto at = stats.find(field);
  return at == std::string::npos ? 0 : std::stoll(stats.substr(at + field.size()));
}

}  // namespace distlock::test
