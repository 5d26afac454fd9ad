#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang and runs each one.
#
#   scripts/fuzz.sh [seconds]     run each target for this long (default 60)
#
# Each target starts from a copy of its seed corpus (tests/fuzz/corpus/<name>)
# in a temporary directory, so the repository's corpus is never written. Exits
# non-zero if a target crashes, leaks, trips a sanitizer or fails its own
# checks; the crash input is kept and the tail of the fuzzer's log is shown.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [seconds]" >&2
  exit 2
fi

bash scripts/setup.sh
build="$root/build-fuzz"
jobs=$(nproc)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DDISTLOCK_BUILD_FUZZERS=ON -DDISTLOCK_BUILD_TESTS=OFF -DDISTLOCK_BUILD_BENCH=OFF \
  -DDISTLOCK_BUILD_EXAMPLES=OFF -DDISTLOCK_BUILD_TOOLS=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target decoder_fuzz uri_fuzz

work=$(mktemp -d /tmp/distlock-fuzz-XXXXXX)
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# libFuzzer's last status line (coverage, corpus size) and its final stats.
summary='^#[0-9]+[[:space:]]+DONE|^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)'
failed=0
for name in decoder uri; do
  mkdir -p "$work/$name/corpus" "$work/$name/artifacts"
  cp "$root/tests/fuzz/corpus/$name/"* "$work/$name/corpus/"
  log="$work/$name/fuzz.log"
  echo "fuzz: ${name}_fuzz for ${seconds}s" >&2
  if "$build/tests/fuzz/${name}_fuzz" "$work/$name/corpus" -max_total_time="$seconds" \
    -print_final_stats=1 -artifact_prefix="$work/$name/artifacts/" >"$log" 2>&1; then
    grep -E "$summary" "$log" >&2 || true
  else
    failed=1
    echo "fuzz: ${name}_fuzz FAILED; last lines of $log:" >&2
    tail -n 40 "$log" >&2
    echo "fuzz: crash inputs kept in $work/$name/artifacts/:" >&2
    ls -l "$work/$name/artifacts/" >&2
    echo "fuzz: reproduce with $build/tests/fuzz/${name}_fuzz <crash file>" >&2
  fi
done

if [[ $failed -eq 0 ]]; then
  rm -rf "$work"
  echo "fuzz: no crash" >&2
fi
exit $failed
