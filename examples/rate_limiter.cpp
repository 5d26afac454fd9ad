// A rate limiter on the server's clock: at most 5 calls per second to a
// partner API, across every process that uses the same limiter name.
#include <distlock/distlock.hpp>

#include <chrono>
#include <cstdio>

int main(int argc, char** argv) {
  const char* uri = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    distlock::Client client(uri);
    // One hash "example:partner-api": rate, interval, GCRA debt and its time.
    distlock::RateLimiter api = client.rate_limiter("example:partner-api");
    api.try_set_rate(5, std::chrono::seconds(1));  // false when already set

    for (int call = 0; call < 8; ++call) {
      // Sleeps exactly until the server says a permit is due (no polling).
      api.acquire();
      std::printf("call %d\n", call);
    }
    if (!api.try_acquire()) std::puts("over the rate: refused, nothing taken");
    std::printf("%lld permits available now\n", static_cast<long long>(api.available_permits()));
    return 0;
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "rate limiter example failed: %s\n", e.what());
    return 1;
  }
}
