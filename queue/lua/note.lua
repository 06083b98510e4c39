-- Leased.Note: record ARGV[2] as the reason entry ARGV[1], still in flight
-- in KEYS[1], was not finished, in attempts hash KEYS[2] under field
-- P_REASON..entry; the next Take of it returns the reason. Reply 1 if
-- recorded, 0 if no longer in flight.
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[2], P_REASON .. ARGV[1], ARGV[2])
return 1
