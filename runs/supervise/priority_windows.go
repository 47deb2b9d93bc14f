package supervise

// Background does nothing here: no worker runs on Windows
// (docs/platforms.md#windows).
func Background(nice int) error { return nil }
