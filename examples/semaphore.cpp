// A crash-safe semaphore: at most 3 workers of any process render at once,
// and a worker that crashes gives its permit back when its lease ends.
#include <distlock/distlock.hpp>

#include <chrono>
#include <cstdio>

int main(int argc, char** argv) {
  const char* uri = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    distlock::Client client(uri);
    distlock::Semaphore renders = client.semaphore("render-slots");
    renders.try_set_permits(3);  // only the first call anywhere sets it

    // Held by this Client, renewed by its watchdog while the process lives.
    if (renders.try_acquire_for(1, std::chrono::seconds(5))) {
      std::puts("rendering");
      renders.release(1);
    }

    // An expiring permit: back by itself after 10 s even if never released.
    if (auto permit =
            renders.try_acquire_permit(1, std::chrono::seconds(1), std::chrono::seconds(10))) {
      std::printf("batch job with a permit until its deadline (%lld left)\n",
                  static_cast<long long>(renders.available_permits()));
    }  // released here
    return 0;
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
