-- Queue.Move: move tasks to the slave queues they are routed to: a dead
-- slave's, those re-enqueued by retry-failed, or queued tasks a slave that
-- joined now owns. KEYS[1] is the source in-flight set, looked at when
-- ARGV[1] is '1'; KEYS[2] the attempts hash, KEYS[3..] the lists tasks
-- come from and go to (a band of a slave queue each, for a job whose
-- pages have priorities). ARGV[2..] holds task/source-index/target-index
-- triples. A task still in its source list (it may have been acknowledged
-- meanwhile) is appended to its target list; one taken from the in-flight
-- set was delivered to a slave that died with it, and that delivery
-- counts as count_delivery says, with start marks (slave queues keep
-- them). Reply the number moved.
local moved = 0
for i = 2, #ARGV, 3 do
  local task = ARGV[i]
  local removed = redis.call('LREM', KEYS[tonumber(ARGV[i + 1])], 1, task)
  if removed == 0 and ARGV[1] == '1' then
    local score = redis.call('ZSCORE', KEYS[1], task)
    if score then
      removed = redis.call('ZREM', KEYS[1], task)
      count_delivery(KEYS[2], task, true, started(score))
    end
  end
  if removed > 0 then
    redis.call('RPUSH', KEYS[tonumber(ARGV[i + 2])], task)
    moved = moved + 1
  end
end
return moved
