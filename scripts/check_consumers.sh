#!/usr/bin/env bash
# Builds tests/consumer twice: against an installed distlock through
# find_package(distlock CONFIG), and through add_subdirectory.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:?usage: check_consumers.sh BUILD_DIR}"
work=$(mktemp -d /tmp/distlock-consumer-XXXXXX)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S tests/consumer -B "$work/installed" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/installed" >/dev/null
cmake -S tests/consumer -B "$work/subdir" -G Ninja -DDISTLOCK_SOURCE_DIR="$PWD" >/dev/null
cmake --build "$work/subdir" >/dev/null
"$work/installed/consumer" && "$work/subdir/consumer"
echo "consumers: find_package and add_subdirectory builds OK"
