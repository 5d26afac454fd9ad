#include "support/server_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "support/fixture_io.hpp"

namespace distlock::test {

namespace fs = std::filesystem;

std::string build_template_once(const std::string& path,
                                const std::string& ready_file,
                                const std::function<void(const std::string& staging)>& make) {
  const std::string ready = path + "/" + ready_file;
  if (fs::exists(ready)) return path;
  const int fd = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + path + ".lock");
  const Socket lock(fd);  // closes it, which releases the flock
  if (::flock(fd, LOCK_EX) != 0) {
    throw std::system_error(errno, std::generic_category(), "flock " + path + ".lock");
  }
  if (fs::exists(ready)) return path;
  const std::string staging = path + ".tmp-" + std::to_string(::getpid());
  fs::remove_all(staging);
  try {
    make(staging);
    fs::rename(staging, path);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
  return path;
}

bool wait_until_ready(const ChildProcess& process,
                      std::chrono::milliseconds bound,
                      std::chrono::milliseconds interval,
                      const std::function<bool()>& probe) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process.running()) return false;
    if (probe()) return true;
    std::this_thread::sleep_for(interval);
  }
  return false;
}

bool launch_server(ChildProcess& process, const ServerLaunch& launch) {
  const std::uintmax_t log_offset = size_or_zero(launch.log_path);
  SpawnOptions spawn_options;
  spawn_options.output_path = launch.log_path;
  process = ChildProcess::spawn(launch.argv, spawn_options);
  if (launch.ready()) return true;
  const std::optional<int> status = process.wait_for_exit(std::chrono::milliseconds(0));
  const std::string log = read_from(launch.log_path, log_offset);
  if (status && log.find(launch.port_taken) != std::string::npos) return false;
  const std::string what =
      status ? "exited (" + describe_wait_status(*status) + ") before it was ready"
             : "was not ready within " + std::to_string(launch.ready_bound.count()) + " s";
  process.kill_and_reap();
  throw std::runtime_error(launch.program + " on port " + std::to_string(launch.port) + " " + what +
                           "; log:\n" + tail(log, 30));
}

void start_in_dir(const std::string& program,
                  ChildProcess& process,
                  const std::string& dir,
                  int attempts,
                  const std::function<void()>& prepare,
                  const std::function<bool()>& attempt,
                  const std::function<std::string()>& log_tail) {
  try {
    prepare();
    for (int n = 1;; ++n) {
      if (attempt()) break;
      if (n == attempts) {
        throw std::runtime_error(program + ": no free port after " + std::to_string(attempts) +
                                 " attempts; log:\n" + log_tail());
      }
    }
  } catch (...) {
    process.kill_and_reap();
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    throw;
  }
}

void tear_down(pid_t owner,
               ChildProcess& process,
               const std::string& dir,
               const std::function<void()>& stop) noexcept {
  if (::getpid() != owner) return;
  try {
    stop();
  } catch (...) {
    process.kill_and_reap();
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

}  // namespace distlock::test
