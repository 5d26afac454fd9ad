#!lua flags=allow-oom
-- allow-oom (Redis 7): a release only frees memory, and must work when the
-- server is at maxmemory.
-- Release the canonical SET NX lock: compare-and-delete, as node redlock and
-- redis-py do, then wake distlock's waiters (the peers do not publish).
-- KEYS[1]  the lock: a string key holding the holder's token
-- KEYS[2]  (optional) its lock-delay marker, deleted by the release
-- ARGV[1]  the releasing holder's token
-- ARGV[2]  the unlock channel; ARGV[3] the unlock message
-- Returns 1 released (deleted and published), -1 not held by this token (gone,
-- another holder's token, or a key of another type). Answers as release.lua
-- does for a last hold, so the shared release machinery reads it unchanged.
if redis.pcall('get', KEYS[1]) ~= ARGV[1] then
  return -1
end
redis.call('del', KEYS[1])
if KEYS[2] then redis.call('del', KEYS[2]) end
redis.call('publish', ARGV[2], ARGV[3])
return 1
