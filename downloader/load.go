package downloader

// Fetching is how many requests are being sent now: those holding one of
// the Workers slots.
func (d *Downloader) Fetching() int { return len(d.workers) }
