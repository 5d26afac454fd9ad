-- A write only a current lock holder can make: the fencing-token check.
-- KEYS[1] the data key; KEYS[2] its fence key (same slot): the highest token
-- any fenced write to KEYS[1] carried.
-- ARGV[1] the writer's token, decimal without leading zeros
-- ARGV[2] 'set' (ARGV[3] value) or 'hset' (ARGV[3] field, ARGV[4] value)
-- Returns 1 when written, 0 when rejected (a newer token has written).
-- Tokens are compared as decimal strings: Lua numbers are doubles and would
-- round tokens above 2^53, making two different tokens compare equal.
local last = redis.call('get', KEYS[2])
if last then
  if not string.find(last, '^%d+$') then
    return redis.error_reply('ERR fence key ' .. KEYS[2] .. ' does not hold a fencing token')
  end
  last = (string.gsub(last, '^0+(%d)', '%1'))
  local token = ARGV[1]
  if #token < #last or (#token == #last and token < last) then
    return 0
  end
end
if ARGV[2] == 'hset' then
  redis.call('hset', KEYS[1], ARGV[3], ARGV[4])
else
  redis.call('set', KEYS[1], ARGV[3])
end
redis.call('set', KEYS[2], ARGV[1])
return 1
