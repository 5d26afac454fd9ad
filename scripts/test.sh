#!/usr/bin/env bash
# Builds distlock and runs every test against real redis-server processes.
#
#   scripts/test.sh                    GCC build, all tests, examples, consumers
#   scripts/test.sh --sanitize asan    Clang + ASan/UBSan build, unit+integration tests
#   scripts/test.sh --sanitize tsan    Clang + TSan build, unit+integration tests
#
# Installs missing Debian packages first (scripts/setup.sh). Exits non-zero on
# any failure. Never touches port 6379: the tests start their own servers on
# free loopback ports.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

sanitize=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sanitize) sanitize="${2:?--sanitize needs asan or tsan}"; shift 2 ;;
    *) echo "usage: scripts/test.sh [--sanitize asan|tsan]" >&2; exit 2 ;;
  esac
done

bash scripts/setup.sh
jobs=$(nproc)

if [[ -n "$sanitize" ]]; then
  build="$root/build-$sanitize"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
    -DDISTLOCK_SANITIZE="$sanitize" -DDISTLOCK_BUILD_BENCH=OFF -DDISTLOCK_BUILD_EXAMPLES=OFF \
    -DDISTLOCK_BUILD_TOOLS=OFF
  cmake --build "$build" -j "$jobs"
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
  ctest --test-dir "$build" --output-on-failure -j "$jobs" -L 'unit|integration' --timeout 300
  exit 0
fi

build="$root/build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$((jobs * 2))" --timeout 300

# The installed package and the source tree must both be consumable.
bash scripts/check_consumers.sh "$build"
