#!/usr/bin/env python3
"""Peer benchmark: the `redis` package's Lock (Debian python3-redis), run
through the same scenarios as distlock-bench against the same server.

    python_bench.py uncontended --port P [--seconds S] [--concurrency 1,16,64]
    python_bench.py contended --port P [--seconds S] [--procs 2] [--workers 8]
                    [--records FILE]

Uncontended: C threads share one redis.Redis client (its connection pool
gives each thread a connection), each on its own lock name. Contended: one
client per thread, `procs` processes x `workers` threads on one name. A held
lock is waited for by polling; the poll interval is 10 ms here (the library's
default is 100 ms), as for the node peers. One JSON object per line on stdout.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import threading
import time

import redis
import redis.lock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import contended_stats  # noqa: E402

POLL_S = 0.01
LEASE_S = 30


def command_calls(r):
    return {name[len("cmdstat_"):] if name.startswith("cmdstat_") else name: v["calls"]
            for name, v in r.info("commandstats").items()}


def server_cpu(r):
    info = r.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


def lua_commands():
    """Commands the Lock runs inside Lua: counted by the server, not round trips."""
    text = "".join(getattr(redis.lock.Lock, a) for a in dir(redis.lock.Lock) if a.startswith("LUA_"))
    return {m.lower() for m in re.findall(r"redis\.p?call\(\s*['\"]([A-Za-z]+)['\"]", text)}


def client_commands(before, after, inside):
    out = {}
    for name, calls in after.items():
        d = calls - before.get(name, 0)
        if d > 0 and name != "info" and name not in inside:
            out[name] = d
    return out


def uncontended(a):
    r = redis.Redis(host=a.host, port=a.port)
    stats = redis.Redis(host=a.host, port=a.port)
    inside = lua_commands()
    for c in [int(x) for x in a.concurrency.split(",")]:
        print(f"python_bench: uncontended {c}", file=sys.stderr)
        acquire, release = [], []
        failed = []
        deadline = time.monotonic_ns() + int(a.seconds * 1e9)
        barrier = threading.Barrier(c)

        def worker(w):
            lock = r.lock(f"bench:u:{os.getpid()}:python:{c}:{w}", timeout=LEASE_S, sleep=POLL_S)
            mine_a, mine_r = [], []
            barrier.wait()
            try:
                for _ in range(20_000_000):
                    t0 = time.monotonic_ns()
                    if t0 >= deadline:
                        break
                    lock.acquire()
                    t1 = time.monotonic_ns()
                    lock.release()
                    mine_a.append(t1 - t0)
                    mine_r.append(time.monotonic_ns() - t1)
            except Exception as e:  # reported in the output line
                failed.append(str(e))
            acquire.extend(mine_a)
            release.extend(mine_r)

        before = command_calls(stats)
        server_cpu0 = server_cpu(stats)
        cpu0 = time.process_time()
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        start = time.monotonic_ns()
        threads = [threading.Thread(target=worker, args=(w,)) for w in range(c)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = (time.monotonic_ns() - start) / 1e9
        cpu = time.process_time() - cpu0
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        switches = ru1.ru_nvcsw + ru1.ru_nivcsw - ru0.ru_nvcsw - ru0.ru_nivcsw
        server_used = server_cpu(stats) - server_cpu0
        cmds = client_commands(before, command_calls(stats), inside)
        n = len(acquire)
        line = {
            "scenario": "uncontended", "lib": "python", "threads": c, "pairs": n,
            "seconds": elapsed, "pairs_per_s": n / elapsed,
            "round_trips_per_pair": sum(cmds.values()) / n if n else 0,
            "evalsha_per_pair": cmds.get("evalsha", 0) / n if n else 0,
            "eval_per_pair": cmds.get("eval", 0) / n if n else 0,
            "client_commands": cmds, "failed": bool(failed),
            "client_cpu_pct": 100 * cpu / elapsed, "server_cpu_pct": 100 * server_used / elapsed,
            "client_cpu_us_per_pair": 1e6 * cpu / n if n else 0,
            "server_cpu_us_per_pair": 1e6 * server_used / n if n else 0,
            "context_switches_per_pair": switches / n if n else 0,
        }
        contended_stats.summarize(acquire, "acquire", line)
        contended_stats.summarize(release, "release", line)
        print(json.dumps(line), flush=True)


def contended_child(a):
    end_at = a.start_at + int(a.seconds * 1e9)
    records, failures = [], []

    def worker(w):
        r = redis.Redis(host=a.host, port=a.port)
        r.ping()
        lock = r.lock(a.name, timeout=LEASE_S, sleep=POLL_S, blocking_timeout=30)
        while time.monotonic_ns() < a.start_at:
            time.sleep(0.0005)
        for _ in range(10_000_000):
            call = time.monotonic_ns()
            if call >= end_at:
                break
            if not lock.acquire():
                failures.append(w)
                continue
            acq = time.monotonic_ns()
            v = r.get(a.counter)
            r.set(a.counter, int(v or 0) + 1)
            rel = time.monotonic_ns()
            lock.release()
            records.append((a.proc, w, call, acq, rel))
        r.close()

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(a.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(a.out, "w") as f:
        for rec in records:
            f.write(" ".join(str(x) for x in rec) + "\n")
    return 0 if not failures else 3


def contended(a):
    r = redis.Redis(host=a.host, port=a.port)
    name = f"bench:c:{os.getpid()}:python"
    counter = name + ":counter"
    r.delete(name)
    r.set(counter, 0)
    start_at = time.monotonic_ns() + 2_000_000_000  # children connect first
    children, files = [], []
    for p in range(a.procs):
        files.append(f"{a.records}.{p}")
        children.append(subprocess.Popen([
            sys.executable, os.path.abspath(__file__), "contended-child", "--host", a.host,
            "--port", str(a.port), "--name", name, "--counter", counter, "--workers",
            str(a.workers), "--proc", str(p), "--start-at", str(start_at), "--seconds",
            str(a.seconds), "--out", files[-1]]))
    ok = True
    for c in children:
        try:
            ok = c.wait(timeout=a.seconds + 60) == 0 and ok
        except subprocess.TimeoutExpired:
            c.kill()
            c.wait()
            ok = False
    history = []
    for f in files:
        if os.path.exists(f):
            history.extend(contended_stats.read_history(f))
            os.remove(f)
    if a.records:
        with open(a.records, "w") as f:
            for rec in history:
                f.write(" ".join(str(x) for x in rec) + "\n")
    final = int(r.get(counter) or 0)
    r.delete(counter)
    line = {"scenario": "contended", "lib": "python", "procs": a.procs,
            "threads_per_proc": a.workers, "seconds": a.seconds, "counter_final": final,
            "children_ok": ok}
    line.update(contended_stats.figures(history, a.procs * a.workers))
    line["counter_exact"] = final == line["counter_expected"]
    print(json.dumps(line), flush=True)


def main():
    p = argparse.ArgumentParser(description="redis-py Lock benchmark")
    p.add_argument("scenario", choices=["uncontended", "contended", "contended-child"])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--concurrency", default="1,16,64")
    p.add_argument("--procs", type=int, default=2)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--records", default="/tmp/python-bench.rec")
    p.add_argument("--name")
    p.add_argument("--counter")
    p.add_argument("--proc", type=int, default=0)
    p.add_argument("--start-at", type=int, default=0)
    p.add_argument("--out")
    a = p.parse_args()
    if a.scenario == "uncontended":
        uncontended(a)
    elif a.scenario == "contended":
        contended(a)
    else:
        return contended_child(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
