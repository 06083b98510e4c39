-- The helpers of the pool's record scripts (report, admit, record, due).
-- The pool's names reach them as constants of the header Go writes
-- (proxy/scripts.go, luaConsts): record hash fields (F_), proxy states
-- (S_), outcome kinds (O_), check verdicts (V_). arg(i) is the script's
-- i-th argument.

local function arg(i)
  return ARGV[i]
end

-- ewma moves old towards x by alpha.
local function ewma(old, x, alpha)
  return old * (1 - alpha) + x * alpha
end

-- score_of is a proxy's quality, 0..1000: its success rate, discounted by
-- latency (a proxy at half_ms latency scores half of a perfect one).
local function score_of(success, latency_ms, half_ms)
  return math.floor(1000 * success * half_ms / (half_ms + latency_ms) + 0.5)
end

local function hnum(key, field)
  return tonumber(redis.call('HGET', key, field) or '0') or 0
end
