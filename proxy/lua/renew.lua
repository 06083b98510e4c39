-- Renew: extend the validator's lease while a round runs, only if token
-- still holds it; a lease that lapsed or was taken meanwhile is lost, not
-- taken back (the round's work is fenced off instead). Returns 1, or 0
-- and the token holding it now ('' for nobody).
-- KEYS: lease. ARGV: token, ttl ms.
local cur = redis.call('GET', KEYS[1])
if cur ~= ARGV[1] then
  return {0, cur or ''}
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return {1, ARGV[1]}
