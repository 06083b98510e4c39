-- The job's outbox (webhooks, package notify), for the ledger's steps that
-- make a transition a webhook announces: finish (a round finished or
-- failed), cancel and pause. Their callers append the keys of
-- OutboxKeys to K (the job's stats, outbox and event counter); they are
-- taken off here, so the script's body sees K as before. recordEvent
-- appends the event, with the job's state and counters, in the same
-- script as the transition: an event is never lost to a process that dies
-- after it. The outbox keeps the newest N_OUTBOX_MAX events; older ones
-- are dropped when nobody sends them (no master runs with a webhook
-- secret).
local OUTBOX_SEQ = table.remove(K)
local OUTBOX = table.remove(K)
local OUTBOX_STATS = table.remove(K)

-- hashTable reads a hash as a Lua table (an empty one encodes as {}).
local function hashTable(key)
  local flat, t = redis.call('HGETALL', key), {}
  for i = 1, #flat, 2 do
    t[flat[i]] = flat[i + 1]
  end
  return t
end

-- recordEvent appends event, at now, with the state hash stateKey and the
-- job's stats as they are now.
local function recordEvent(stateKey, event, now)
  local id = redis.call('INCR', OUTBOX_SEQ)
  local rec = cjson.encode({id = id, event = event, at = now, state = hashTable(stateKey), stats = hashTable(OUTBOX_STATS)})
  redis.call('RPUSH', OUTBOX, rec)
  redis.call('LTRIM', OUTBOX, -N_OUTBOX_MAX, -1)
end

-- roundEvent is the event of a round that ended: failed when the job has
-- stored no item, else finished.
local function roundEvent()
  if tonumber(redis.call('HGET', OUTBOX_STATS, F_STAT_STORED) or '0') > 0 then
    return E_FINISHED
  end
  return E_FAILED
end
