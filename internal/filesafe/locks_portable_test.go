//go:build !unix || portable

package filesafe

// flocks: locks are lock files here (lock_portable.go), removed by Unlock,
// and a temp file's writer is judged by its pid alone.
const flocks = false
