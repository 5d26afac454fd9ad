// A fair lock: jobs from several threads (or processes) take it in the order
// they asked for it; each unlock hands it straight to the next in line.
#include <distlock/distlock.hpp>

#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  const char* uri = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    distlock::Client client(uri);
    distlock::Lock queue = client.fair_lock("reports:render");  // all of Lock's API
    std::vector<std::thread> jobs;
    for (int job = 0; job < 4; ++job) {
      jobs.emplace_back([&queue, job] {
        // Waits in line at most 30 s; a waiter that gives up leaves the line.
        if (!queue.try_lock_for(std::chrono::seconds(30))) return;
        std::lock_guard guard(queue, std::adopt_lock);
        std::printf("job %d rendering\n", job);
      });
    }
    for (auto& j : jobs) j.join();

    // Fenced: every holder, in order, gets a larger token.
    distlock::Lock fenced = client.fenced_fair_lock("reports:publish");
    if (std::optional<distlock::Lease> lease = fenced.try_acquire()) {
      std::printf("token %llu\n", static_cast<unsigned long long>(*lease->fencing_token()));
    }
    return 0;
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "distlock: %s\n", e.what());
    return 1;
  }
}
