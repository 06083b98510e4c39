-- Ledger.RecordEvent: append an event to the job's outbox (after
-- unfenced.lua and outbox.lua), for a transition made by a step that does
-- not compose outbox.lua itself. K: state. A: event, now (RFC 3339).
-- Reply 0 when the job does not exist (nothing recorded), else the
-- event's ID.
if redis.call('EXISTS', K[1]) == 0 then
  return 0
end
recordEvent(K[1], A[1], A[2])
return tonumber(redis.call('GET', OUTBOX_SEQ))
