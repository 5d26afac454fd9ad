#!lua flags=allow-oom
-- Release one read hold of a read-write lock (layout: rw_read_acquire.lua).
-- Idempotent per unlock call, as release.lua: the caller passes the hold
-- count it expects before this release.
-- KEYS[1]  the lock hash
-- KEYS[2]  this owner's timeout-key prefix "{name}:<owner>:rwlock_timeout"
-- KEYS[3]  the timeout-key prefix of the name (see rw_write_acquire.lua)
-- ARGV[1]  reader owner id
-- ARGV[2]  the owner's read hold count before this release
-- ARGV[3]  the unlock channel; ARGV[4] the unlock message
-- Returns -1 not held by this owner, 0 count decremented (still held),
-- 1 this owner's last read hold released (the last reader of all deletes the
-- hash and publishes, waking a writer), 2 this release was already applied.
local count = redis.call('hget', KEYS[1], ARGV[1])
if not count then
  return -1
end
count = tonumber(count)
if count ~= tonumber(ARGV[2]) then
  return 2
end
redis.call('del', KEYS[2] .. ':' .. count)
if count > 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], -1)
  return 0
end
redis.call('hdel', KEYS[1], ARGV[1])
if redis.call('hget', KEYS[1], 'mode') == 'write' then
  -- A writer's own read hold: the writer still holds the lock.
  return 1
end
-- The hash lives as long as its longest live read hold; with none left the
-- lock is free (fields of crashed readers whose leases ended count for none).
local longest = 0
local fields = redis.call('hgetall', KEYS[1])
for i = 1, #fields, 2 do
  local field, holds = fields[i], tonumber(fields[i + 1])
  if field ~= 'mode' then
    for n = 1, (holds or 0) do
      local left = redis.call('pttl', KEYS[3] .. ':' .. field .. ':rwlock_timeout:' .. n)
      if left > longest then
        longest = left
      end
    end
  end
end
if longest > 0 then
  redis.call('pexpire', KEYS[1], longest)
  return 1
end
redis.call('del', KEYS[1])
redis.call('publish', ARGV[3], ARGV[4])
return 1
