// The last release of a Client's permits waits for its reply without holding
// what the Client's I/O thread needs: an async acquire started on that thread
// meanwhile goes ahead, and the reply of the release is delivered. The part
// that would hang runs in a fork()ed child, so a regression fails this test
// within its bound instead of hanging the test binary.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <asio/post.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "distlock/distlock.hpp"
#include "support/redis_server.hpp"
#include "support/tcp_proxy.hpp"
#include "support/test_helpers.hpp"

// Whether this is a ThreadSanitizer build (GCC and Clang spell it apart).
#if defined(__SANITIZE_THREAD__)
#define DISTLOCK_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DISTLOCK_UNDER_TSAN 1
#endif
#endif
#ifndef DISTLOCK_UNDER_TSAN
#define DISTLOCK_UNDER_TSAN 0
#endif

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::RedisServer;
using test::TcpProxy;

// How long each step may take: far beyond what it needs, short of the
// parent's bound for the whole child.
constexpr auto kStepBound = 20s;
constexpr auto kChildBound = 90s;

// In the child: reports why it failed and ends at once, without running the
// destructors that would wait for the stuck threads.
[[noreturn]] void fail_child(const char* why) {
  std::fprintf(stderr, "child: %s\n", why);
  std::fflush(stderr);
  std::_Exit(1);
}

long long available(Client& c, const std::string& name) {
  return std::stoll(c.command("GET", name).as_string());
}

// In the child: the release of the Client's last permit is held on its way
// (by the proxy) while an async acquire starts on the Client's I/O thread.
// Returns once both completed; ends the process through fail_child if not.
void release_while_an_acquire_starts_on_the_io_thread(const RedisServer& server) {
  TcpProxy proxy(server.port());
  ClientOptions o = ClientOptions::from_uri(proxy.uri());
  o.watchdog_timeout = 30s;  // no renewal within the test's steps
  Client client(o);
  Semaphore sem = client.semaphore("s");
  if (!sem.try_set_permits(1)) fail_child("could not set the permits");
  sem.acquire(1);

  proxy.hold();
  auto released = std::async(std::launch::async, [&] {
    std::error_code ec;
    sem.release(1, ec);  // the last permit, nothing else in flight: retires the holder
    return ec;
  });
  // The Client sends nothing else while idle: held bytes are the release's.
  if (!eventually([&] { return proxy.pending_bytes() > 0; }, kStepBound)) {
    fail_child("the release was never sent");
  }
  std::promise<void> started;
  std::promise<std::pair<std::error_code, bool>> acquired;
  asio::post(get_executor(client), [&] {
    sem.async_try_acquire_for(1, 0ms, [&](std::error_code ec, bool ok) {
      acquired.set_value({ec, ok});
    });
    started.set_value();
  });
  if (started.get_future().wait_for(kStepBound) != std::future_status::ready) {
    fail_child("the async acquire did not start: the I/O thread is blocked");
  }
  proxy.resume();
  if (released.wait_for(kStepBound) != std::future_status::ready) {
    fail_child("the release never completed");
  }
  auto acquire = acquired.get_future();
  if (acquire.wait_for(kStepBound) != std::future_status::ready) {
    fail_child("the async acquire never completed");
  }
  if (released.get()) fail_child("the release failed");
  const auto [ec, ok] = acquire.get();
  // One connection: the server ran the release before the acquire.
  if (ec || !ok) fail_child("the async acquire did not take the released permit");
  if (sem.held_permits() != 1 || available(client, "s") != 0) {
    fail_child("the Client's count does not match the server's");
  }
  sem.release(1);
  if (available(client, "s") != 1) fail_child("the permit did not come back");
}

// Runs `body` in a fork()ed child; true when the child exited 0 within
// `bound` (it is killed otherwise).
template <class Body>
bool in_child_within(std::chrono::seconds bound, Body body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    try {
      body();
    } catch (const std::exception& e) {
      fail_child(e.what());
    }
    std::fflush(nullptr);
    std::_Exit(0);  // not back into gtest: the parent reports
  }
  auto exited = std::async(std::launch::async, [pid] {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  });
  if (exited.wait_for(bound) != std::future_status::ready) {
    ::kill(pid, SIGKILL);
    exited.wait();
    return false;
  }
  const int status = exited.get();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(SemaphoreRelease, TheLastReleaseDoesNotBlockTheIoThreadWhileItWaitsForItsReply) {
#if DISTLOCK_UNDER_TSAN
  // ThreadSanitizer refuses to start threads in a child forked from a
  // multi-threaded process; the plain and ASan runs cover this test.
  GTEST_SKIP() << "fork with threads is not supported under ThreadSanitizer";
#endif
  RedisServer server;  // the parent's: a killed child leaves no server behind
  EXPECT_TRUE(in_child_within(kChildBound,
                              [&] { release_while_an_acquire_starts_on_the_io_thread(server); }))
      << "the release and an async acquire started on the I/O thread meanwhile must both "
         "complete (the child says what did not)";
}

}  // namespace
}  // namespace distlock
