-- Layout shared by every filter script:
-- ARGV[1] = number of mode keys (KEYS[1..nmk]), ARGV[2] = number of
-- fingerprints, ARGV[3] = number of mode arguments (ARGV[4..3+nma]); what
-- follows belongs to the tail (admit, seen, contains, prepare, sweep).
local nmk = tonumber(ARGV[1])
local nfp = tonumber(ARGV[2])
local nma = tonumber(ARGV[3])
local tail = 4 + nma

-- int formats a number for a command that wants an integer argument.
local function int(x)
  return string.format('%.0f', x)
end

-- now_ms is the time argument, or the Redis server's clock when it is < 0.
local function now_ms(arg)
  local now = tonumber(arg)
  if now >= 0 then
    return now
  end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- flags turns a table of booleans into a string of '1' (true) and '0'.
local function flags(t, n)
  local out = {}
  for i = 1, n do
    out[i] = t[i] and '1' or '0'
  end
  return table.concat(out)
end
