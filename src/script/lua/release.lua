#!lua flags=allow-oom
-- allow-oom (Redis 7): a release only frees memory, and must work when the
-- server is at maxmemory, or a reentrant holder's local and server counts
-- would part ways.
-- Release one hold of a reentrant lock. Idempotent per unlock call: the
-- caller passes the hold count it expects before this release, so a retry of
-- a call whose reply was lost changes nothing.
-- KEYS[1]  the lock hash
-- KEYS[2]  (optional) its lock-delay marker (acquire.lua): a partial unlock
--          keeps it the delay longer than the lease; a release deletes it
-- ARGV[1]  lease in milliseconds: a partial unlock re-arms it, as Redisson's does
-- ARGV[2]  owner id
-- ARGV[3]  the owner's hold count before this release
-- ARGV[4]  the unlock channel; ARGV[5] the unlock message
-- Returns -1 not held by this owner, 0 count decremented (still held),
-- 1 released (deleted and published), 2 this release was already applied.
local count = redis.call('hget', KEYS[1], ARGV[2])
if not count then
  return -1
end
if tonumber(count) ~= tonumber(ARGV[3]) then
  return 2
end
if tonumber(count) > 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], -1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  if KEYS[2] then
    local delay = redis.call('get', KEYS[2])
    if delay then redis.call('pexpire', KEYS[2], tonumber(ARGV[1]) + tonumber(delay)) end
  end
  return 0
end
if KEYS[2] then redis.call('del', KEYS[2]) end
redis.call('del', KEYS[1])
redis.call('publish', ARGV[4], ARGV[5])
return 1
