#include "terminal.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "exit_codes.hpp"

namespace distlock::cli {
namespace {

termios g_saved{};
bool g_raw = false;
constexpr char kEnter[] = "\x1b[?1049h\x1b[?25l";
constexpr char kLeave[] = "\x1b[?25h\x1b[?1049l";

// Async-signal-safe: tcsetattr and write only.
void restore() {
  if (g_raw) tcsetattr(STDIN_FILENO, TCSAFLUSH, &g_saved);
  [[maybe_unused]] const auto n = write(STDOUT_FILENO, kLeave, sizeof kLeave - 1);
}

void on_signal(int signo) {
  restore();
  _exit(kExitSignalBase + signo);
}

}  // namespace

Terminal::Terminal() {
  if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &g_saved) == 0) {
    termios raw = g_saved;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    g_raw = tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0;
  }
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (int signo : {SIGINT, SIGTERM, SIGHUP}) sigaction(signo, &action, nullptr);
  [[maybe_unused]] const auto n = write(STDOUT_FILENO, kEnter, sizeof kEnter - 1);
}

Terminal::~Terminal() {
  restore();
  g_raw = false;
}

char Terminal::read_key(std::chrono::milliseconds bound) {
  if (stdin_eof_) {
    std::this_thread::sleep_for(bound);
    return 0;
  }
  pollfd fd{STDIN_FILENO, POLLIN, 0};
  if (poll(&fd, 1, static_cast<int>(bound.count())) <= 0) return 0;
  char c = 0;
  const auto n = read(STDIN_FILENO, &c, 1);
  if (n == 0) stdin_eof_ = true;
  return n == 1 ? c : 0;
}

int Terminal::rows() const {
  winsize w{};
  return ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_row > 0 ? w.ws_row : 24;
}

int Terminal::columns() const {
  winsize w{};
  return ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0 ? w.ws_col : 80;
}

}  // namespace distlock::cli
