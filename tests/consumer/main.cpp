// Compiles and links against distlock, including the Asio-based async header;
// makes no connection.
#include <distlock/distlock.hpp>

#include <cstdio>

int main() {
  try {
    distlock::ClientOptions::from_uri("redis://127.0.0.1:0");
  } catch (const distlock::Error& e) {
    return e.code() == distlock::errc::invalid_argument ? 0 : 1;
  }
  std::puts("a URI with port 0 was accepted");
  return 1;
}
