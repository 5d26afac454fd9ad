-- Acquire (or re-enter) a reentrant lock. Layout compatible with Redisson's RLock.
-- KEYS[1]  the lock: a hash of owner id -> hold count, with PEXPIRE = lease
-- KEYS[2]  (fenced locks only) the fencing counter, INCR'd once per new holding
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner id
-- Returns nil when acquired (plain lock), {token} when acquired (fenced lock),
-- otherwise the lock's PTTL in milliseconds.
local fresh = redis.call('exists', KEYS[1]) == 0
if fresh or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  if KEYS[2] == nil then
    return nil
  end
  if fresh then
    return {redis.call('incr', KEYS[2])}
  end
  -- Re-entry: while the lock is held nobody else can INCR, so the counter is
  -- still this holder's token.
  return {tonumber(redis.call('get', KEYS[2]) or '0')}
end
return redis.call('pttl', KEYS[1])
