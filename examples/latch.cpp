// A countdown latch: a coordinator waits until three workers (threads here;
// any process works the same) have each counted down once.
#include <distlock/distlock.hpp>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  const char* uri = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    distlock::Client client(uri);
    // String key "example:ready" holds the count (Redisson's layout).
    distlock::Latch ready = client.latch("example:ready");
    if (!ready.try_set_count(3)) std::puts("a count was already set; joining that round");

    std::vector<std::thread> workers;
    for (int i = 0; i < 3; ++i) {
      workers.emplace_back([&client, i] {
        std::printf("worker %d ready\n", i);
        client.latch("example:ready").count_down();
      });
    }
    // Wakes on the zero-count message, in every process that waits.
    if (ready.wait_for(std::chrono::seconds(30))) std::puts("all workers ready");
    for (auto& w : workers) w.join();
    return 0;
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "latch example failed: %s\n", e.what());
    return 1;
  }
}
