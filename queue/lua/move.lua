-- Queue.Move: move tasks to the slave queues they are routed to: a dead
-- slave's, those re-enqueued by retry-failed, or queued tasks a slave that
-- joined now owns. KEYS[1] is the source list; KEYS[2] the source
-- in-flight set, looked at when ARGV[1] is '1'; KEYS[3] the attempts hash,
-- KEYS[4..] the target queues. ARGV[2..4] are the attempts hash's count,
-- started and unstarted field prefixes; ARGV[5..] holds task/target-index
-- pairs. A task still in the source (it may have been acknowledged
-- meanwhile) is appended to its target queue; one taken from the
-- in-flight set was delivered to a slave that died with it, and that
-- delivery counts as count_delivery says. Reply the number moved.
local moved = 0
for i = 5, #ARGV, 2 do
  local task = ARGV[i]
  local removed = redis.call('LREM', KEYS[1], 1, task)
  if removed == 0 and ARGV[1] == '1' then
    removed = redis.call('ZREM', KEYS[2], task)
    if removed > 0 then
      count_delivery(KEYS[3], task, ARGV[2], ARGV[3], ARGV[4])
    end
  end
  if removed > 0 then
    redis.call('RPUSH', KEYS[tonumber(ARGV[i + 1])], task)
    moved = moved + 1
  end
end
return moved
