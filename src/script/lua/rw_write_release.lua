#!lua flags=allow-oom
-- Release one write hold of a read-write lock (layout: rw_read_acquire.lua).
-- Idempotent per unlock call, as release.lua.
-- KEYS[1]  the lock hash
-- KEYS[2]  (optional) the writer's lock-delay marker: a partial unlock keeps
--          it the delay longer than the lease, the last write release
--          (also a downgrade to the writer's read holds) deletes it
-- ARGV[1]  lease in milliseconds: a partial unlock re-arms it (never shorter)
-- ARGV[2]  the writer's field "<owner>:write"
-- ARGV[3]  its write hold count before this release
-- ARGV[4]  the unlock channel; ARGV[5] the unlock message
-- Returns -1 not held by this owner, 0 count decremented (still held),
-- 1 released, 2 this release was already applied. The last write hold's
-- release publishes, waking every waiting reader: the lock is deleted, or,
-- when the writer still has read holds of its own (a downgrade), it turns to
-- mode 'read' and other readers may join.
local count = redis.call('hget', KEYS[1], ARGV[2])
if not count then
  return -1
end
count = tonumber(count)
if count ~= tonumber(ARGV[3]) then
  return 2
end
if count > 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], -1)
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
    redis.call('pexpire', KEYS[1], ARGV[1])
  end
  if KEYS[2] then
    local delay = redis.call('get', KEYS[2])
    if delay then redis.call('pexpire', KEYS[2], tonumber(ARGV[1]) + tonumber(delay)) end
  end
  return 0
end
if KEYS[2] then redis.call('del', KEYS[2]) end
redis.call('hdel', KEYS[1], ARGV[2])
if redis.call('hlen', KEYS[1]) > 1 then
  redis.call('hset', KEYS[1], 'mode', 'read')
else
  redis.call('del', KEYS[1])
end
redis.call('publish', ARGV[4], ARGV[5])
return 1
