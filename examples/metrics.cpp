// Metrics: a Client's counters as a snapshot, in the Prometheus text format,
// and over HTTP for a scraper; plus the long-hold warning.
#include <distlock/distlock.hpp>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

int main(int argc, char** argv) {
  const char* uri = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    distlock::ClientOptions options = distlock::ClientOptions::from_uri(uri);
    // Called once per holding still held after 200 ms (on the I/O thread).
    options.long_hold_warning = std::chrono::milliseconds(200);
    options.on_long_hold = [](const distlock::LongHoldEvent& e) {
      std::printf("long hold: %s by %s for %lld ms\n", e.name.c_str(), e.owner.c_str(),
                  static_cast<long long>(e.held_for.count()));
    };
    distlock::Client client(options);

    distlock::Lock lock = client.lock("example:metrics");
    for (int i = 0; i < 3; ++i) {
      std::lock_guard guard(lock);
    }

    const distlock::MetricsSnapshot s = client.metrics();
    const distlock::PrimitiveMetrics& locks = s.of(distlock::MetricPrimitive::lock);
    std::printf(
        "lock: %llu acquired, %llu waited, %llu holds\n",
        static_cast<unsigned long long>(locks.acquires_of(distlock::AcquireResult::acquired)),
        static_cast<unsigned long long>(locks.contended),
        static_cast<unsigned long long>(locks.hold.count));

    // GET http://127.0.0.1:<port>/metrics serves the same text until `http` dies.
    distlock::MetricsServer http(client, "127.0.0.1", 0);
    std::printf("serving /metrics on 127.0.0.1:%u\n", static_cast<unsigned>(http.port()));
    const std::string text = distlock::prometheus_text(client);
    std::printf("%zu bytes of exposition text, e.g. the first line: %s\n", text.size(),
                text.substr(0, text.find('\n')).c_str());
    return 0;
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "metrics example failed: %s\n", e.what());
    return 1;
  }
}
