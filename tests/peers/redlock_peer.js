#!/usr/bin/env node
// A real node-redlock v4 peer for the simple lock's interop tests
// (tests/integration/simple_lock_interop_test.cpp). redlock and ioredis come
// from bench/peers' npm lock file (NODE_PATH=bench/peers/node_modules).
// Prints one line per event on stdout, which the test reads.
//
//   node redlock_peer.js PORT KEY hold TTL_MS
//       acquire (waiting), print "acquired <token>", wait until KEY:go
//       exists, unlock (compare-and-delete, no publish), print "released"
//   node redlock_peer.js PORT KEY try TTL_MS
//       one attempt: print "got" (then unlock) or "busy"
//   node redlock_peer.js PORT KEY late TTL_MS
//       acquire, print "acquired <token>", wait until KEY holds another
//       value, then unlock: print "unlock refused" or "unlock ok"
//   node redlock_peer.js PORT KEY count TTL_MS COUNTER ROUNDS
//       ROUNDS times: lock, GET COUNTER, SET COUNTER n+1, unlock; print "done"
'use strict';

const Redis = require('ioredis');
const Redlock = require('redlock');

const [port, key, mode, ttlText, counter, roundsText] = process.argv.slice(2);
const ttl = Number(ttlText);
const redis = new Redis({ port: Number(port), host: '127.0.0.1', lazyConnect: false });
// Waiting is polling in redlock: every 10 ms (+-5), without limit; the test
// bounds every wait.
const waiting = new Redlock([redis], { retryCount: -1, retryDelay: 10, retryJitter: 5 });
const once = new Redlock([redis], { retryCount: 0 });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const say = (line) => process.stdout.write(line + '\n');

async function until(pred) {
  for (;;) {
    if (await pred()) return;
    await sleep(10);
  }
}

async function main() {
  if (mode === 'hold') {
    const lock = await waiting.lock(key, ttl);
    say('acquired ' + lock.value);
    await until(async () => (await redis.exists(key + ':go')) === 1);
    await lock.unlock();
    say('released');
  } else if (mode === 'try') {
    try {
      const lock = await once.lock(key, ttl);
      say('got');
      await lock.unlock();
    } catch (e) {
      if (!(e instanceof Redlock.LockError)) throw e;
      say('busy');
    }
  } else if (mode === 'late') {
    const lock = await waiting.lock(key, ttl);
    say('acquired ' + lock.value);
    await until(async () => {
      const v = await redis.get(key);
      return v !== null && v !== lock.value;
    });
    try {
      await lock.unlock();
      say('unlock ok');
    } catch (e) {
      if (!(e instanceof Redlock.LockError)) throw e;
      say('unlock refused');
    }
  } else if (mode === 'count') {
    for (let i = 0; i < Number(roundsText); i++) {
      const lock = await waiting.lock(key, ttl);
      const n = Number((await redis.get(counter)) || '0');
      await redis.set(counter, String(n + 1));
      await lock.unlock();
    }
    say('done');
  } else {
    throw new Error('unknown mode ' + mode);
  }
}

main()
  .then(() => redis.quit())
  .catch((e) => {
    say('error ' + e.message);
    process.exit(1);
  });
