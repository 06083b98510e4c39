-- SeenBatch: check and insert, reply with one '1' (new) or '0' per fingerprint.
return flags(check_insert(), nfp)
