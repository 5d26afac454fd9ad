#!lua flags=allow-oom
-- Delete a lock whoever holds it and wake its waiters.
-- KEYS[1] the lock hash; ARGV[1] the unlock channel; ARGV[2] the unlock message
-- Returns 1 when a lock was deleted, 0 otherwise.
if redis.call('del', KEYS[1]) == 1 then
  redis.call('publish', ARGV[1], ARGV[2])
  return 1
end
return 0
