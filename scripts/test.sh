#!/usr/bin/env bash
# Builds distlock and runs every test against real redis-server processes.
#
#   scripts/test.sh                    GCC build: unit, integration and fault tests,
#                                      the examples, and the find_package/add_subdirectory
#                                      consumers
#   scripts/test.sh --sanitize asan    Clang + ASan/UBSan build, unit and integration tests
#   scripts/test.sh --sanitize tsan    Clang + TSan build, unit and integration tests
#   scripts/test.sh --all              all of the above, the clang-format check and
#                                      60 s of each fuzzer (what CI runs; CI=true implies it)
#
# Installs missing Debian packages first (scripts/setup.sh). Exits non-zero on
# any failure. Never touches port 6379: the tests start their own servers on
# free loopback ports.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

sanitize=""
all=0
[[ "${CI:-}" == "true" ]] && all=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sanitize) sanitize="${2:?--sanitize needs asan or tsan}"; shift 2 ;;
    --all) all=1; shift ;;
    *) echo "usage: scripts/test.sh [--sanitize asan|tsan] [--all]" >&2; exit 2 ;;
  esac
done

bash scripts/setup.sh
# node redlock v4 and ioredis for the simple lock's interop tests, pinned by
# bench/peers/package-lock.json.
if [[ ! -d bench/peers/node_modules ]]; then
  npm ci --prefix bench/peers --no-audit --no-fund
fi
jobs=$(nproc)
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }

run_sanitized() {
  local kind=$1 build="$root/build-$1"
  stamp "building with $kind"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
    -DDISTLOCK_SANITIZE="$kind" -DDISTLOCK_BUILD_BENCH=OFF -DDISTLOCK_BUILD_EXAMPLES=OFF \
    -DDISTLOCK_BUILD_TOOLS=OFF >/dev/null
  # Only what the sanitized run executes: the other test binaries (topology,
  # fault, zookeeper, sql, cli) run in the plain build.
  cmake --build "$build" -j "$jobs" --target distlock_unit_tests distlock_integration_tests
  stamp "unit and integration tests under $kind"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp" \
    ctest --test-dir "$build" --output-on-failure -j "$((jobs + 1))" -L 'unit|integration' \
    --timeout 300
}

if [[ -n "$sanitize" ]]; then
  run_sanitized "$sanitize"
  exit 0
fi

build="$root/build"
stamp "building (GCC, warnings as errors)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$jobs"
stamp "unit, integration and fault tests"
ctest --test-dir "$build" --output-on-failure -j "$((jobs * 2))" --timeout 300
stamp "consumers"
bash scripts/check_consumers.sh "$build"
stamp "debian package"
bash scripts/check_deb.sh "$build"
stamp "API reference (doxygen: an undocumented public member fails it)"
cmake --build "$build" --target docs

if [[ $all -eq 1 ]]; then
  stamp "clang-format"
  git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run -Werror
  run_sanitized asan
  run_sanitized tsan
  if [[ -x scripts/fuzz.sh || -f scripts/fuzz.sh ]]; then
    stamp "fuzzing"
    bash scripts/fuzz.sh 60
  fi
  stamp "done"
fi
