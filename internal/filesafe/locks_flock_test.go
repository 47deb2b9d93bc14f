//go:build unix && !portable

package filesafe

// flocks: locks are flocks here (lock_unix.go): a lock file stays after
// Unlock, and a temp file's writer is also judged by the flock it holds.
const flocks = true
