-- The pool's names, passed by Go as the first ARGV in this order
-- (proxy/scripts.go, luaNames; a test keeps the two in step): record hash
-- fields (F_), proxy states (S_), outcome kinds (O_), check verdicts (V_).
-- Script arguments follow: arg(i) is the script's i-th own argument.
local F_STATE = ARGV[1]
local F_PROXY = ARGV[2]
local F_SCHEME = ARGV[3]
local F_ADDED_MS = ARGV[4]
local F_CHECKED_MS = ARGV[5]
local F_USABLE_MS = ARGV[6]
local F_PASSED_MS = ARGV[7]
local F_REMOVED_MS = ARGV[8]
local F_REASON = ARGV[9]
local F_FAILED_ROUNDS = ARGV[10]
local F_CHECKS = ARGV[11]
local F_CHECKS_OK = ARGV[12]
local F_LATENCY_MS = ARGV[13]
local F_SUCCESS = ARGV[14]
local F_SCORE = ARGV[15]
local F_ANONYMITY = ARGV[16]
local F_TUNNEL = ARGV[17]
local F_OK = ARGV[18]
local F_TIMEOUTS = ARGV[19]
local F_EVICTIONS = ARGV[20]
local F_BANS = ARGV[21]
local F_TARGET_ERRORS = ARGV[22]
local F_TIMEOUT_STREAK = ARGV[23]
local S_NEW = ARGV[24]
local S_USABLE = ARGV[25]
local S_FAILING = ARGV[26]
local S_DEAD = ARGV[27]
local S_REJECTED = ARGV[28]
local O_OK = ARGV[29]
local O_TIMEOUT = ARGV[30]
local O_PROXY = ARGV[31]
local O_BAN = ARGV[32]
local O_TARGET = ARGV[33]
local V_OK = ARGV[34]
local V_FAIL = ARGV[35]
local V_REJECT = ARGV[36]
local V_HOLD = ARGV[37]
local V_UNREACHABLE = ARGV[38]
local NCONST = 38

local function arg(i)
  return ARGV[NCONST + i]
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
