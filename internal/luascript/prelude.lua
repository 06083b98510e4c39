-- The prelude every cluster script starts with (package luascript).

-- now_ms is the Redis server's clock in milliseconds: every process of the
-- cluster reads time from the one clock they share.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- int formats a number for a command that wants an integer argument
-- (Lua numbers are doubles; tostring would write 1e+15).
local function int(x)
  return string.format('%.0f', x)
end

-- fail returns an error reply whose first word is code: Go translates the
-- code into a sentinel error (luascript.Codes).
local function fail(code, detail)
  return redis.error_reply(code .. ' ' .. (detail or ''))
end
