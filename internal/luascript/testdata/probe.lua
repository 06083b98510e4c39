-- probe: fails with ARGV[1] as code and ARGV[2] as detail when ARGV[1] is
-- not empty; otherwise answers the server clock and a big integer formatted.
if ARGV[1] ~= '' then
  return fail(ARGV[1], ARGV[2])
end
return {now_ms(), int(1e15)}
