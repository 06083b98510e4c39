-- Sweep: remove every expired entry; reply with how many.
return sweep()
