-- Renew many holdings in one call (the watchdog's batch), or only check them.
-- Holdings of any primitive and any lease length share a batch.
-- KEYS[i]      the holding's key (one slot per call in Cluster)
-- ARGV[3i-2]   its kind: 'h' the hash KEYS[i] has the field ARGV[3i-1] (a
--              lock's owner), 's' the string KEYS[i] equals ARGV[3i-1] (a
--              SET NX lock's token)
-- ARGV[3i-1]   that field or value
-- ARGV[3i]     lease in milliseconds; "0" checks without extending (fixed
--              leases, after a reconnect)
-- Returns an array: 1 renewed (or still held), 0 no longer held. A key of the
-- wrong type counts as not held, and does not fail the rest of the batch.
local result = {}
for i = 1, #KEYS do
  local kind, member, ttl = ARGV[3 * i - 2], ARGV[3 * i - 1], ARGV[3 * i]
  local held = false
  if kind == 'h' then
    held = redis.pcall('hexists', KEYS[i], member) == 1
  elseif kind == 's' then
    held = redis.pcall('get', KEYS[i]) == member
  end
  if held and ttl ~= '0' then
    redis.call('pexpire', KEYS[i], ttl)
  end
  result[i] = held and 1 or 0
end
return result
