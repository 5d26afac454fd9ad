-- Acquire (or re-enter) a reentrant lock. Layout compatible with Redisson's RLock.
-- KEYS[1]  the lock: a hash of owner id -> hold count, with PEXPIRE = lease
-- KEYS[2]  the lock-delay marker (docs/lock.md, "Lock-delay"): a string of a
--          holder's delay in ms that outlives the lock by that delay; while
--          it exists and the lock does not, a lease ended without a release
--          and nobody may take the lock
-- KEYS[3]  (fenced locks only) the fencing counter, INCR'd once per new holding
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner id
-- ARGV[3]  this holder's lock-delay in ms ('0': none). Without ARGV[3] the
--          keys are the earlier layout: KEYS[2] is the fencing counter and no
--          marker is read or written.
-- Returns nil when acquired (plain lock), {token} when acquired (fenced lock),
-- otherwise the lock's PTTL in milliseconds; during a delay {'delay', the
-- marker's PTTL}.
local marker, fence = KEYS[2], KEYS[3]
if ARGV[3] == nil then marker, fence = nil, KEYS[2] end
local fresh = redis.call('exists', KEYS[1]) == 0
if fresh and marker then
  local delayed = redis.call('pttl', marker)
  if delayed ~= -2 then return {'delay', delayed} end
end
if fresh or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  if marker and ARGV[3] ~= '0' then
    redis.call('set', marker, ARGV[3], 'PX', tonumber(ARGV[1]) + tonumber(ARGV[3]))
  end
  if fence == nil then
    return nil
  end
  if fresh then
    return {redis.call('incr', fence)}
  end
  -- Re-entry: while the lock is held nobody else can INCR, so the counter is
  -- still this holder's token.
  return {tonumber(redis.call('get', fence) or '0')}
end
return redis.call('pttl', KEYS[1])
