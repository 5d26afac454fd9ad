"""A scratch redis-server for the Python benchmarks (batch_server_cost.py,
lock_delay_cost.py): on a free loopback port in a temporary directory, pinned
to CPU 0 (this process to CPU 1) when taskset exists and there are two CPUs,
with its own CPU time readable from /proc. Stopped by pid on exit."""

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time

import redis


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def cpu_seconds(pid):
    """The process's user + system CPU time in seconds."""
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def pinned_server(prefix):
    """Yields (redis.Redis client, server pid) once the server answers PING."""
    scratch = tempfile.mkdtemp(prefix=prefix)
    port = free_port()
    pin = shutil.which("taskset") is not None and os.cpu_count() >= 2
    cmd = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
           "--appendonly", "no", "--dir", scratch]
    server = subprocess.Popen((["taskset", "-c", "0"] if pin else []) + cmd,
                              stdout=subprocess.DEVNULL)
    if pin:
        os.sched_setaffinity(0, {1})
    try:
        r = redis.Redis(host="127.0.0.1", port=port)
        for _ in range(100):
            try:
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        yield r, server.pid
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(scratch, ignore_errors=True)
