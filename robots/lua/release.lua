-- release: give up a fetch lease without storing anything (the fetch was
-- cancelled), so another process need not wait for it to expire.
-- KEYS[1] fetch lease (value: token@deadline_ms); ARGV[1] lease token
-- Returns 1 if it held the lease, else 0.
local lease = redis.call('GET', KEYS[1])
if lease and string.sub(lease, 1, #ARGV[1] + 1) == ARGV[1] .. '@' then
  return redis.call('DEL', KEYS[1])
end
return 0
