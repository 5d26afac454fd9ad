#!/usr/bin/python3
"""A real redis-py Lock peer for the simple lock's interop tests
(tests/integration/simple_lock_interop_test.cpp), on Debian's python3-redis.
Prints one line per event on stdout, which the test reads.

  redis_py_peer.py PORT KEY hold TTL_MS
      acquire (waiting), print "acquired <token>", wait until KEY:go exists,
      release (compare-and-delete, no publish), print "released"
  redis_py_peer.py PORT KEY try TTL_MS
      one attempt: print "got" (then release) or "busy"
  redis_py_peer.py PORT KEY late TTL_MS
      acquire, print "acquired <token>", wait until KEY holds another value,
      then release: print "unlock refused" or "unlock ok"
  redis_py_peer.py PORT KEY count TTL_MS COUNTER ROUNDS
      ROUNDS times: lock, GET COUNTER, SET COUNTER n+1, unlock; print "done"
"""
import sys
import time

import redis
from redis.exceptions import LockNotOwnedError


def say(line):
    print(line, flush=True)


def until(pred):
    while not pred():
        time.sleep(0.01)


def main():
    port, key, mode, ttl_ms = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    r = redis.Redis(host="127.0.0.1", port=int(port))
    # timeout is the lease (seconds); sleep is the polling interval while
    # waiting. The test bounds every wait, so blocking has no limit here.
    def new_lock():
        return r.lock(key, timeout=ttl_ms / 1000.0, sleep=0.01, thread_local=False)

    if mode == "hold":
        lock = new_lock()
        lock.acquire(blocking=True)
        say("acquired " + lock.local.token.decode())
        until(lambda: r.exists(key + ":go") == 1)
        lock.release()
        say("released")
    elif mode == "try":
        lock = new_lock()
        if lock.acquire(blocking=False):
            say("got")
            lock.release()
        else:
            say("busy")
    elif mode == "late":
        lock = new_lock()
        lock.acquire(blocking=True)
        token = lock.local.token
        say("acquired " + token.decode())
        until(lambda: r.get(key) not in (None, token))
        try:
            lock.release()
            say("unlock ok")
        except LockNotOwnedError:
            say("unlock refused")
    elif mode == "count":
        counter, rounds = sys.argv[5], int(sys.argv[6])
        for _ in range(rounds):
            lock = new_lock()
            lock.acquire(blocking=True)
            n = int(r.get(counter) or b"0")
            r.set(counter, str(n + 1))
            lock.release()
        say("done")
    else:
        raise SystemExit("unknown mode " + mode)


if __name__ == "__main__":
    main()
