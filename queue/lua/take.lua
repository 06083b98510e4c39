-- Leased.Take: move up to ARGV[1] entries from the head of list KEYS[1]
-- into in-flight set KEYS[2] with a lease of ARGV[2] ms; KEYS[3] is the
-- attempts hash. Reply as deliver (deliver.lua) says.
local entries = redis.call('LPOP', KEYS[1], tonumber(ARGV[1]))
if not entries then
  return {}
end
return deliver(entries, KEYS[2], KEYS[3], tonumber(ARGV[2]))
