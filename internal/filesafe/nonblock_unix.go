//go:build unix

package filesafe

import "syscall"

// openNonblock is added to the flags of an open that may meet a FIFO: it
// fails or is refused after, never waited on.
const openNonblock = syscall.O_NONBLOCK
