-- Acquire the canonical SET NX lock (the layout node redlock, redsync and
-- redis-py's Lock use): the key holds a random token, with PEXPIRE = lease.
-- KEYS[1]  the lock: a string key holding the holder's token
-- KEYS[2]  (fenced locks only) the fencing counter, INCR'd once per holding
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  this acquisition's token
-- Returns nil when acquired (plain lock), {token} when acquired (fenced lock),
-- otherwise the key's PTTL in milliseconds (-1 when it has no expiry). A key
-- of another type held by something else is contended the same way.
if redis.call('set', KEYS[1], ARGV[2], 'NX', 'PX', ARGV[1]) then
  if KEYS[2] == nil then
    return nil
  end
  return {redis.call('incr', KEYS[2])}
end
return redis.call('pttl', KEYS[1])
