-- Layout shared by every filter script, after the luascript prelude:
-- ARGV[1] = number of mode keys (KEYS[1..nmk]), ARGV[2] = number of
-- fingerprints, ARGV[3] = number of mode arguments (ARGV[4..3+nma]); what
-- follows belongs to the tail (admit, seen, contains, prepare, sweep).
-- Each mode defines check_insert, contains, prepare and sweep; each
-- returns its result, or nil and an error reply (fail) that the tail
-- returns before it has written anything.
local nmk = tonumber(ARGV[1])
local nfp = tonumber(ARGV[2])
local nma = tonumber(ARGV[3])
local tail = 4 + nma

-- granule is the time granule the mode checked and wrote (bloom), -1
-- otherwise; the tails reply with it.
local granule = -1

-- clock_ms is the time argument (ms), or the server's clock when it is < 0.
local function clock_ms(arg)
  local t = tonumber(arg)
  if t >= 0 then
    return t
  end
  return now_ms()
end

-- ALL_TRUE is the metatable of a table of booleans that holds only its
-- falses: any other index reads true.
local ALL_TRUE = {__index = function() return true end}

-- flags_all_true is flags for a table of ALL_TRUE.
local function flags_all_true(t, n)
  local zeros, out, last = {}, {}, 0
  for i, v in pairs(t) do
    if v == false then
      zeros[#zeros + 1] = i
    end
  end
  table.sort(zeros)
  for _, z in ipairs(zeros) do
    out[#out + 1] = string.rep('1', z - last - 1) .. '0'
    last = z
  end
  out[#out + 1] = string.rep('1', n - last)
  return table.concat(out)
end

-- flags turns a table of booleans into a string of '1' (true) and '0',
-- a run of equal flags at a time (most are equal: all new, or all seen).
local function flags(t, n)
  if getmetatable(t) == ALL_TRUE then
    return flags_all_true(t, n)
  end
  local out, i = {}, 1
  while i <= n do
    local v, j = t[i], i + 1
    while j <= n and not t[j] == not v do
      j = j + 1
    end
    out[#out + 1] = string.rep(v and '1' or '0', j - i)
    i = j
  end
  return table.concat(out)
end
