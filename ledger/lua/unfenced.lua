-- The opening of a ledger script that acts for no master (client cancel):
-- its body sees KEYS and ARGV as K and A, as a master's script does after
-- its fence (master/lua/fence.lua).
local K, A = KEYS, ARGV
