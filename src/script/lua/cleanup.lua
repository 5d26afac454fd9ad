#!lua flags=allow-oom
-- Undo an acquire whose reply was lost: remove this owner's fresh holding.
-- Sent right after the lost acquire on the same connection, so it runs after
-- it if that acquire ran at all.
-- KEYS[1] the lock hash; ARGV[1] owner id; ARGV[2] hold count the acquire
-- would have produced; ARGV[3] channel; ARGV[4] message
-- Returns 1 when it removed the holding, 0 otherwise.
local count = redis.call('hget', KEYS[1], ARGV[1])
if not count or tonumber(count) ~= tonumber(ARGV[2]) then
  return 0
end
if tonumber(count) > 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], -1)
  return 1
end
redis.call('del', KEYS[1])
redis.call('publish', ARGV[3], ARGV[4])
return 1
