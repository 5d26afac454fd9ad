-- Take (or re-enter) a read hold of a read-write lock. Redisson's
-- RReadWriteLock layout: the hash KEYS[1] has 'mode' = 'read' | 'write', one
-- field per reader owner -> its read hold count, and per read hold n a
-- timeout key "<KEYS[2]>:<n>" whose PEXPIRE is that hold's lease. The hash's
-- PEXPIRE is the longest of them (and of the writer's lease).
-- KEYS[1]  the lock hash
-- KEYS[2]  this owner's timeout-key prefix: "{name}:<owner>:rwlock_timeout"
-- KEYS[3]  (optional: a handle with a delay) the write side's lock-delay
--          marker (rw_write_acquire.lua): while it exists and the hash does
--          not, no read hold is taken either
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  reader owner id (the hash field)
-- ARGV[3]  the same owner's write field ("<owner>:write"): a writer may read
-- Returns nil when acquired, otherwise the hash's PTTL (-1: no expiry);
-- during a delay {'delay', the marker's PTTL}.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false and KEYS[3] then
  local delayed = redis.call('pttl', KEYS[3])
  if delayed ~= -2 then return {'delay', delayed} end
end
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'read')
end
if mode == false or mode == 'read' or
    (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
  local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':' .. n, 1, 'px', ARGV[1])
  -- Never shorten: the hash must outlive every hold in it.
  local left = redis.call('pttl', KEYS[1])
  if left < tonumber(ARGV[1]) then
    redis.call('pexpire', KEYS[1], ARGV[1])
  end
  return nil
end
return redis.call('pttl', KEYS[1])
