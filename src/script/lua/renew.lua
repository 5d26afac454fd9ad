-- Renew many leases in one call (the watchdog's batch), or only check them.
-- KEYS[i]    lock hashes (one slot per call in Cluster)
-- ARGV[1]    lease in milliseconds; "0" checks ownership without extending
--            (fixed leases, after a reconnect)
-- ARGV[i+1]  owner id of KEYS[i]
-- Returns an array: 1 renewed (or still held), 0 no longer held by that
-- owner. A key of the wrong type counts as not held, and does not fail the
-- rest of the batch.
local extend = ARGV[1] ~= '0'
local result = {}
for i = 1, #KEYS do
  local held = redis.pcall('hexists', KEYS[i], ARGV[i + 1])
  if held == 1 then
    if extend then
      redis.call('pexpire', KEYS[i], ARGV[1])
    end
    result[i] = 1
  else
    result[i] = 0
  end
end
return result
