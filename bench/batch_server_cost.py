#!/usr/bin/python3
"""Server CPU per operation: one script call per operation against batched calls.

Issue 26's question behind coalescing: how much server work does a batch save?
Starts its own redis-server on a free loopback port (pinned to CPU 0 when
taskset exists; this client on CPU 1), and for each batch size N sends the same
operations (SimpleLock acquire + release of N distinct names) four ways, all
pipelined N at a time so every way shares its syscalls alike:

  native  SET NX PX + GET/DEL (no Lua: the floor no script reaches)
  single  one EVALSHA per operation (what distlock sends without coalescing)
  batch   one EVALSHA of distlock's batch script per N operations
          (src/script/batch.cpp's dispatcher over every plain member)
  fcall   the same dispatcher and members as a Redis 7 FUNCTION library, one
          FCALL per N operations (the member functions made once, at load)

and reads the server's own CPU time (/proc/PID/stat utime+stime) around each.
Rounds alternate the ways; prints medians in microseconds of server CPU per
operation and as a ratio to `single` in the same run. Never gates CI.

  /usr/bin/python3 bench/batch_server_cost.py [--rounds 3] [--ops 96000] [--sizes 1,4,16,64]
"""

import argparse
import glob
import os
import statistics

import redis
from pinned_server import cpu_seconds, pinned_server

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LUA = os.path.join(ROOT, "src", "script", "lua")


def body(path):
    text = open(path).read()
    return text.split("\n", 1)[1] if text.startswith("#!") else text


def dispatcher():
    src = open(os.path.join(ROOT, "src", "script", "batch.cpp")).read()
    start = src.index('R"lua(') + len('R"lua(')
    return src[start:src.index(')lua"')]


def member_table(names, bodies):
    out = "local f = {}\n"
    for i, b in enumerate(bodies):
        out += "f[%d] = function(KEYS, ARGV)\n%s\nend\n" % (i + 1, b)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ops", type=int, default=96000, help="operations per way and round")
    ap.add_argument("--sizes", default="1,4,16,64")
    opt = ap.parse_args()
    sizes = [int(s) for s in opt.sizes.split(",")]

    # Plain members (no shebang) and allow-oom members, as batch.cpp builds them.
    plain, oom = [], []
    for path in sorted(glob.glob(os.path.join(LUA, "*.lua"))):
        name = os.path.basename(path)[:-4]
        if name == "renew":
            continue
        (oom if open(path).read().startswith("#!") else plain).append(name)
    disp = dispatcher()
    batch_plain = member_table(plain, [body(os.path.join(LUA, n + ".lua")) for n in plain]) + disp
    batch_oom = "#!lua flags=allow-oom\n" + member_table(
        oom, [body(os.path.join(LUA, n + ".lua")) for n in oom]) + disp
    library = "#!lua name=distlock_batch_bench\n"
    for tag, names in (("p", plain), ("o", oom)):
        library += "local %s = {}\n" % tag
        for i, n in enumerate(names):
            library += "%s[%d] = function(KEYS, ARGV)\n%s\nend\n" % (
                tag, i + 1, body(os.path.join(LUA, n + ".lua")))
    for tag, flags in (("p", "{}"), ("o", "{'allow-oom'}")):
        library += ("redis.register_function{function_name='batch_%s', flags=%s, "
                    "callback=function(KEYS, ARGV)\nlocal f = %s\n%s\nend}\n" % (tag, flags, tag, disp))

    with pinned_server("distlock-batch-cost-") as (r, server_pid):
        sha_acq = r.script_load(open(os.path.join(LUA, "simple_acquire.lua")).read())
        sha_rel = r.script_load(open(os.path.join(LUA, "simple_release.lua")).read())
        sha_bp = r.script_load(batch_plain)
        sha_bo = r.script_load(batch_oom)
        r.function_load(library, replace=True)
        i_acq = plain.index("simple_acquire") + 1
        i_rel = oom.index("simple_release") + 1

        def batch_args(n, index, per_op):
            out = [str(n)]
            for _ in range(n):
                out += [str(index), "1", str(len(per_op))]
            return out + per_op * n

        def way(kind, n, rounds):
            keys = ["bench:%d:%d" % (n, i) for i in range(n)]
            acq = ["30000", "tok"]
            rel = ["tok", "distlock_unlock", "0"]
            pipe = r.pipeline(transaction=False)
            for _ in range(rounds):
                if kind == "native":
                    for k in keys:
                        pipe.set(k, "tok", nx=True, px=30000)
                    pipe.execute()
                    for k in keys:
                        pipe.get(k)
                        pipe.delete(k)
                elif kind == "single":
                    for k in keys:
                        pipe.evalsha(sha_acq, 1, k, *acq)
                    pipe.execute()
                    for k in keys:
                        pipe.evalsha(sha_rel, 1, k, *rel)
                elif kind == "batch":
                    pipe.evalsha(sha_bp, n, *keys, *batch_args(n, i_acq, acq))
                    pipe.execute()
                    pipe.evalsha(sha_bo, n, *keys, *batch_args(n, i_rel, rel))
                else:
                    pipe.fcall("batch_p", n, *keys, *batch_args(n, i_acq, acq))
                    pipe.execute()
                    pipe.fcall("batch_o", n, *keys, *batch_args(n, i_rel, rel))
                for reply in pipe.execute():
                    if isinstance(reply, redis.ResponseError):
                        raise reply

        ways = ["native", "single", "batch", "fcall"]
        results = {(w, n): [] for w in ways for n in sizes}
        for rnd in range(opt.rounds):
            order = ways if rnd % 2 == 0 else list(reversed(ways))
            for n in sizes:
                rounds = max(1, opt.ops // n)
                for w in order:
                    way(w, n, 10)  # warm
                    before = cpu_seconds(server_pid)
                    way(w, n, rounds)
                    results[(w, n)].append((cpu_seconds(server_pid) - before) * 1e6 / (rounds * n))
        print("server CPU per operation (acquire or release), us; median of %d rounds, "
              "%d ops per way, redis %s" % (opt.rounds, opt.ops, r.info()["redis_version"]))
        print("%-5s %-8s %-8s %-8s %-8s  %-7s %-7s %-7s" % (
            "N", "native", "single", "batch", "fcall", "nat/sgl", "bat/sgl", "fc/sgl"))
        for n in sizes:
            med = {w: statistics.median(results[(w, n)]) / 2 for w in ways}  # 2 ops per key
            print("%-5d %-8.2f %-8.2f %-8.2f %-8.2f  %-7.2f %-7.2f %-7.2f" % (
                n, med["native"], med["single"], med["batch"], med["fcall"],
                med["native"] / med["single"], med["batch"] / med["single"],
                med["fcall"] / med["single"]))


if __name__ == "__main__":
    main()
