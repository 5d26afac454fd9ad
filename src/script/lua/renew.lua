-- Renew many holdings in one call (the watchdog's batch), or only check them.
-- Holdings of any primitive and any lease length share a batch.
-- KEYS[2i-1]   the holding's key (one slot per call in Cluster)
-- KEYS[2i]     a second key its kind uses (the first again when none)
-- ARGV[3i-2]   its kind: 'h' the hash KEYS[2i-1] has the field ARGV[3i-1] (a
--              lock's owner), 's' the string KEYS[2i-1] equals ARGV[3i-1] (a
--              SET NX lock's token), 'q' the zset KEYS[2i-1] has the member
--              ARGV[3i-1] (a fair lock's waiting place): its score becomes the
--              server's TIME + the lease, and the zset and the queue KEYS[2i]
--              live at least that long
-- ARGV[3i-1]   that field or value
-- ARGV[3i]     lease in milliseconds; "0" checks without extending (fixed
--              leases, after a reconnect)
-- Returns an array: 1 renewed (or still held), 0 no longer held. A key of the
-- wrong type counts as not held, and does not fail the rest of the batch.
local result = {}
for i = 1, #ARGV / 3 do
  local key = KEYS[2 * i - 1]
  local kind, member, ttl = ARGV[3 * i - 2], ARGV[3 * i - 1], ARGV[3 * i]
  local held = false
  if kind == 'h' then
    held = redis.pcall('hexists', key, member) == 1
  elseif kind == 's' then
    held = redis.pcall('get', key) == member
  elseif kind == 'q' then
    held = type(redis.pcall('zscore', key, member)) == 'string'
    if held and ttl ~= '0' then
      local t = redis.call('time')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      redis.call('zadd', key, now + tonumber(ttl), member)
      for _, k in ipairs({key, KEYS[2 * i]}) do
        if redis.call('pttl', k) < tonumber(ttl) then redis.call('pexpire', k, ttl) end
      end
    end
    ttl = '0'  -- extended above: the PEXPIRE below is for the other kinds
  end
  if held and ttl ~= '0' then
    redis.call('pexpire', key, ttl)
  end
  result[i] = held and 1 or 0
end
return result
