-- Acquire the canonical SET NX lock (the layout node redlock, redsync and
-- redis-py's Lock use): the key holds a random token, with PEXPIRE = lease.
-- KEYS[1]  the lock: a string key holding the holder's token
-- KEYS[2]  the lock-delay marker (as acquire.lua's)
-- KEYS[3]  (fenced locks only) the fencing counter, INCR'd once per holding
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  this acquisition's token
-- ARGV[3]  this holder's lock-delay in ms ('0': none). Without ARGV[3] the
--          keys are the earlier layout (KEYS[2] the fencing counter, no
--          marker): Redlock's nodes are called so.
-- Returns nil when acquired (plain lock), {token} when acquired (fenced lock),
-- otherwise the key's PTTL in milliseconds (-1 when it has no expiry); during
-- a delay {'delay', the marker's PTTL}. A key of another type held by something else is
-- contended the same way.
local marker, fence = KEYS[2], KEYS[3]
if ARGV[3] == nil then marker, fence = nil, KEYS[2] end
if marker then
  local delayed = redis.call('pttl', marker)
  if delayed ~= -2 and redis.call('exists', KEYS[1]) == 0 then return {'delay', delayed} end
end
if redis.call('set', KEYS[1], ARGV[2], 'NX', 'PX', ARGV[1]) then
  if marker and ARGV[3] ~= '0' then
    redis.call('set', marker, ARGV[3], 'PX', tonumber(ARGV[1]) + tonumber(ARGV[3]))
  end
  if fence == nil then
    return nil
  end
  return {redis.call('incr', fence)}
end
return redis.call('pttl', KEYS[1])
