#!/usr/bin/env bash
# Builds the .deb with `cpack -G DEB` in a build directory and checks that it
# unpacks (dpkg -x, into a scratch root) with the distlock tool, its man
# page, the headers, the library and the CMake package in place.
#
#   scripts/check_deb.sh [BUILD_DIR]      (default: build)
set -euo pipefail
build=$(realpath "${1:-build}")
scratch=$(mktemp -d /tmp/distlock-deb-XXXXXX)
trap 'rm -rf "$scratch"' EXIT

(cd "$build" && cpack -G DEB -B "$scratch/out" >/dev/null)
deb=$(ls "$scratch"/out/distlock_*.deb)
info=$(dpkg-deb --info "$deb")
[[ "$info" == *"Depends: "*libhiredis0.14* ]] || { echo "check_deb: Depends lacks libhiredis0.14" >&2; exit 1; }
dpkg -x "$deb" "$scratch/root"
missing=0
for f in usr/bin/distlock usr/share/man/man1/distlock.1 usr/include/distlock/distlock.hpp \
         usr/include/distlock/client.hpp usr/lib/libdistlock.a \
         usr/lib/cmake/distlock/distlockConfig.cmake usr/lib/cmake/distlock/distlockConfigVersion.cmake \
         usr/lib/cmake/distlock/distlockTargets.cmake usr/lib/pkgconfig/distlock.pc; do
  [[ -e "$scratch/root/$f" ]] || { echo "check_deb: $f missing from $(basename "$deb")" >&2; missing=1; }
done
[[ $missing -eq 0 ]]
"$scratch/root/usr/bin/distlock" --version >/dev/null
# The CMake package works from where the .deb put it: find_package(distlock).
cmake -S "$(dirname "$0")/../tests/consumer" -B "$scratch/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$scratch/root/usr" >/dev/null
cmake --build "$scratch/consumer" >/dev/null
"$scratch/consumer/consumer"
echo "check_deb: $(basename "$deb") has the tool, man page, headers, library and a working CMake package"
