#!/usr/bin/env bash
# Installs the Debian packages distlock needs to build, test, run the demo and
# the benchmarks. This is the one list of packages; README.md repeats it.
#
# As root it runs `apt-get update` once and `apt-get install -y` for whatever is
# missing; otherwise it prints the exact command to run and fails.
#
# Installing redis-server on Debian normally starts a Redis on port 6379. We
# never want that side effect: the install runs with a policy-rc.d that
# forbids service starts, so nothing is left listening. Debian's zookeeper
# package has no service to start (zookeeperd, never installed here, would
# start one on 2181); the same policy-rc.d would forbid starting it anyway.
# postgresql and mariadb-server would start their services on 5432 and 3306:
# the policy-rc.d forbids that too.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git clang clang-format libclang-rt-14-dev
  libhiredis-dev libasio-dev libssl-dev openssl libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  redis-server redis-tools redis-sentinel
  # The simple lock's interop tests run redis-py's Lock and node redlock as
  # real peers (redlock itself comes from bench/peers' npm lock file).
  python3 python3-redis
  # distlock top's test drives it in a real terminal.
  tmux
  # The metrics tests fetch /metrics over HTTP.
  curl
  # The API reference (cmake --build build --target docs).
  doxygen
  # The ZooKeeper backend's tests start a real ensemble (tests/support/
  # zookeeper_ensemble.hpp): Debian's zookeeper ships the server jars without
  # starting a service; java from default-jre-headless; the C client library.
  zookeeper default-jre-headless libzookeeper-mt-dev
  # The ZooKeeper lock's interop tests run Apache Curator's InterProcessMutex
  # as a real peer (tests/support/curator_peer.hpp), compiled with javac.
  libcurator-recipes-java default-jdk-headless
  # The SQL backends: the client libraries (libpq, MariaDB Connector/C), and
  # the servers their tests start as fixtures on free loopback ports in
  # scratch dirs (tests/support/postgres_server.hpp, mariadb_server.hpp).
  # The policy-rc.d below keeps the packages' own services from starting.
  libpq-dev libmariadb-dev postgresql mariadb-server
)
# A machine with NodeSource's nodejs already has npm bundled, and Debian's
# npm package conflicts with it: add node and npm only when they are missing.
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(gnuplot-nox util-linux)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "distlock: missing Debian packages. Run as root:" >&2
  echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "distlock: installing ${missing[*]}" >&2
policy=/usr/sbin/policy-rc.d
own_policy=0
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  own_policy=1
fi
cleanup() { if [[ $own_policy -eq 1 ]]; then rm -f "$policy"; fi; }
trap cleanup EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
