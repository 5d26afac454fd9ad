// The terminal for `distlock top`: raw keyboard input and the alternate
// screen, restored on every way out (return, exception, SIGINT/SIGTERM/SIGHUP).
#pragma once

#include <chrono>

namespace distlock::cli {

// While it lives: stdin (when a terminal) is in raw mode (no echo, no line
// buffering), stdout shows the alternate screen with the cursor hidden.
// The destructor restores both; so do SIGINT/SIGTERM/SIGHUP, which then end
// the process with 128 + signo. One at a time per process.
class Terminal {
 public:
  Terminal();
  ~Terminal();
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  // Waits at most `bound` for a key; returns it, or 0 when none came. Once
  // stdin is at end of file, just waits out the bound.
  char read_key(std::chrono::milliseconds bound);
  // Rows and columns (24x80 when not a terminal).
  int rows() const;
  int columns() const;

 private:
  bool stdin_eof_ = false;
};

}  // namespace distlock::cli
