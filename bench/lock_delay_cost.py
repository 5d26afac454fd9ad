#!/usr/bin/python3
"""Server CPU per Lock / SimpleLock acquire+release pair, with and without a lock-delay.

What LockOptions::lock_delay costs the server (docs/lock.md, "Lock-delay"):
starts its own redis-server on a free loopback port (pinned to CPU 0 when
taskset exists; this client on CPU 1) and runs the library's own scripts
(src/script/lua) the way the client calls them, pipelined 64 pairs at a
time, on fresh names each round:

  lock         acquire.lua + release.lua without a delay (the earlier KEYS/ARGV)
  lock+delay   the same with a 15 s delay (marker read, set and deleted)
  simple       simple_acquire.lua + simple_release.lua without a delay
  simple+delay the same with a 15 s delay

Reads the server's own CPU time (/proc/PID/stat) around each; rounds
alternate the order; prints medians in microseconds per pair and the ratio
of each delayed form to its plain one in the same run. Never gates CI.

  /usr/bin/python3 bench/lock_delay_cost.py [--rounds 3] [--pairs 64000]
"""

import argparse
import os
import statistics

import redis
from pinned_server import cpu_seconds, pinned_server

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LUA = os.path.join(ROOT, "src", "script", "lua")
DEPTH = 64


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=64000, help="pairs per way and round")
    opt = ap.parse_args()

    with pinned_server("distlock-delay-cost-") as (r, server_pid):
        sha = {n: r.script_load(open(os.path.join(LUA, n + ".lua")).read())
               for n in ("acquire", "release", "simple_acquire", "simple_release")}
        channel = "redisson_lock__channel:{bench}"

        def way(kind, rounds, tag):
            pipe = r.pipeline(transaction=False)
            for rnd in range(rounds):
                names = ["b:%s:%d:%d" % (tag, rnd, i) for i in range(DEPTH)]
                delayed = kind.endswith("+delay")
                for n in names:
                    marker = "distlock_lock_delay:{%s}" % n
                    if kind.startswith("lock"):
                        if delayed:
                            pipe.evalsha(sha["acquire"], 2, n, marker, "30000", "owner", "15000")
                        else:
                            pipe.evalsha(sha["acquire"], 1, n, "30000", "owner")
                    elif delayed:
                        pipe.evalsha(sha["simple_acquire"], 2, n, marker, "30000", "tok", "15000")
                    else:
                        pipe.evalsha(sha["simple_acquire"], 1, n, "30000", "tok")
                for reply in pipe.execute():
                    if reply is not None:
                        raise RuntimeError("acquire not granted: %r" % (reply,))
                for n in names:
                    marker = "distlock_lock_delay:{%s}" % n
                    keys = [n, marker] if delayed else [n]
                    if kind.startswith("lock"):
                        pipe.evalsha(sha["release"], len(keys), *keys, "30000", "owner", "1",
                                     channel, "0")
                    else:
                        pipe.evalsha(sha["simple_release"], len(keys), *keys, "tok", channel, "0")
                for reply in pipe.execute():
                    if reply != 1:
                        raise RuntimeError("release not applied: %r" % (reply,))

        ways = ["lock", "lock+delay", "simple", "simple+delay"]
        results = {w: [] for w in ways}
        rounds = max(1, opt.pairs // DEPTH)
        for rnd in range(opt.rounds):
            for w in (ways if rnd % 2 == 0 else list(reversed(ways))):
                way(w, 5, "warm%d%s" % (rnd, w))
                before = cpu_seconds(server_pid)
                way(w, rounds, "r%d%s" % (rnd, w))
                results[w].append((cpu_seconds(server_pid) - before) * 1e6 / (rounds * DEPTH))
        print("server CPU per acquire+release pair, us; median of %d rounds, %d pairs per way, "
              "pipelined %d deep, redis %s" % (opt.rounds, rounds * DEPTH, DEPTH,
                                               r.info()["redis_version"]))
        med = {w: statistics.median(results[w]) for w in ways}
        for w in ways:
            base = med[w.split("+")[0]]
            print("%-13s %6.2f  %.2fx" % (w, med[w], med[w] / base))


if __name__ == "__main__":
    main()
