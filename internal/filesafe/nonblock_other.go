//go:build !unix

package filesafe

// openNonblock: Windows has no FIFOs in the file system to wait on.
const openNonblock = 0
