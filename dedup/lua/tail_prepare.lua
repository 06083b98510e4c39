-- Prepare: create the keys of the current and the coming granule ahead of
-- time.
local n, err = prepare()
if err then
  return err
end
return n
