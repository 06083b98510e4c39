-- Prepare: create the keys of the coming granule ahead of time.
return prepare()
