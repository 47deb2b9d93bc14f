//go:build !unix

package store

// openNonblock: Windows has no FIFOs in the file system to wait on.
const openNonblock = 0
