#!lua flags=allow-oom
-- Delete a lock whoever holds it and wake its waiters.
-- KEYS[1] the lock hash; KEYS[2] (optional) its lock-delay marker, deleted
-- too: a forced release never leaves a delay behind, and ends one running
-- ARGV[1] the unlock channel; ARGV[2] the unlock message
-- Returns 1 when a lock was deleted, 0 otherwise.
local delayed = KEYS[2] and redis.call('del', KEYS[2]) == 1
if redis.call('del', KEYS[1]) == 1 then
  redis.call('publish', ARGV[1], ARGV[2])
  return 1
end
if delayed then redis.call('publish', ARGV[1], ARGV[2]) end
return 0
