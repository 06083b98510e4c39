-- Queue.Move: move tasks to the slave queues they are routed to: a dead
-- slave's, those re-enqueued by retry-failed, or queued tasks a slave that
-- joined now owns. KEYS[1] is the source list; KEYS[2] the source
-- in-flight set, looked at when ARGV[1] is '1'; KEYS[3] the attempts hash,
-- KEYS[4..] the target queues. ARGV[2..] holds task/target-index pairs. A
-- task still in the source (it may have been acknowledged meanwhile) is
-- appended to its target queue; one taken from the in-flight set was
-- delivered to a slave that died with it, and that delivery counts as
-- count_delivery says, with start marks (slave queues keep them). Reply
-- the number moved.
local moved = 0
for i = 2, #ARGV, 2 do
  local task = ARGV[i]
  local removed = redis.call('LREM', KEYS[1], 1, task)
  if removed == 0 and ARGV[1] == '1' then
    local score = redis.call('ZSCORE', KEYS[2], task)
    if score then
      removed = redis.call('ZREM', KEYS[2], task)
      count_delivery(KEYS[3], task, true, started(score))
    end
  end
  if removed > 0 then
    redis.call('RPUSH', KEYS[tonumber(ARGV[i + 1])], task)
    moved = moved + 1
  end
end
return moved
