// Lease tokens from the per-thread generator: well formed, unique over many
// draws, different between threads, and never the parent's in a forked child.
#include "runtime/identity.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <set>
#include <string>
#include <thread>
#include <vector>

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

namespace distlock::runtime {
namespace {

bool is_token(const std::string& t) {
  return t.size() == 32 && t.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::vector<std::string> draw(std::size_t n) {
  std::vector<std::string> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(random_token());
  return out;
}

// How many of `tokens` are in `seen`, adding them.
std::size_t repeats(std::set<std::string>& seen, const std::vector<std::string>& tokens) {
  std::size_t n = 0;
  for (const auto& t : tokens) n += seen.insert(t).second ? 0 : 1;
  return n;
}

TEST(Identity, TokensAre32HexDigitsAndUniqueOver200000Draws) {
  // Past several buffers and one reseed (every 65,536 tokens).
  const auto tokens = draw(200000);
  for (const auto& t : tokens) ASSERT_TRUE(is_token(t)) << t;
  std::set<std::string> seen;
  EXPECT_EQ(repeats(seen, tokens), 0u);
}

TEST(Identity, TokensOfDifferentThreadsDiffer) {
  constexpr int kThreads = 8;
  std::vector<std::vector<std::string>> per_thread(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&per_thread, i] { per_thread[i] = draw(10000); });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> seen;
  for (const auto& tokens : per_thread) EXPECT_EQ(repeats(seen, tokens), 0u);
}

// Draws `n` tokens in a child made by `make_child` (fork or _Fork) and
// returns them; the parent draws as many after it.
std::vector<std::string> tokens_of_a_child(pid_t (*make_child)(), std::size_t n) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = make_child();
  if (pid == 0) {
    close(fds[0]);
    for (const auto& t : draw(n)) {
      if (write(fds[1], t.data(), t.size()) != static_cast<ssize_t>(t.size())) _exit(1);
    }
    _exit(0);
  }
  close(fds[1]);
  std::vector<std::string> child;
  std::string buffer;
  char chunk[4096];
  for (ssize_t got; (got = read(fds[0], chunk, sizeof chunk)) > 0;) buffer.append(chunk, got);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (std::size_t i = 0; i + 32 <= buffer.size(); i += 32) child.push_back(buffer.substr(i, 32));
  EXPECT_EQ(child.size(), n);
  return child;
}

void expect_child_differs(pid_t (*make_child)()) {
  // The parent's generator is seeded and has tokens buffered when it forks.
  draw(3);
  const auto child = tokens_of_a_child(make_child, 100);
  const auto parent = draw(100);
  std::set<std::string> seen;
  EXPECT_EQ(repeats(seen, parent), 0u);
  EXPECT_EQ(repeats(seen, child), 0u) << "the child repeated the parent's tokens";
}

pid_t plain_fork() {
  return fork();
}

TEST(Identity, AChildMadeByForkDrawsTokensTheParentDoesNot) {
  if (DISTLOCK_UNDER_TSAN) GTEST_SKIP() << "fork in a multithreaded process under TSan";
  expect_child_differs(&plain_fork);
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
pid_t fork_without_handlers() {
  return _Fork();  // no pthread_atfork handlers run: only the wiped page tells the child
}

TEST(Identity, AChildMadeWithoutForkHandlersDrawsTokensTheParentDoesNot) {
  if (DISTLOCK_UNDER_TSAN) GTEST_SKIP() << "fork in a multithreaded process under TSan";
  expect_child_differs(&fork_without_handlers);
}
#endif

}  // namespace
}  // namespace distlock::runtime
