// Package filesafe owns the file-safety primitives every writer and reader
// of a repository shares, below store and internal/git: atomic writes
// (write.go) and the removal of a dead writer's temp file, locks and the
// liveness of their holders (lock*.go, proc_*.go), where saga-lsp keeps a
// repository's state (LockDir, StateDir), the one bounded reader
// of a regular file (fs_*.go, bounded.go), the stamps that tell a file
// unchanged without reading it (stamp.go, fs_*.go) and reads confined to the
// workspace (confine.go) or to a folder someone else writes (inside_*.go:
// no link followed, regular files only), writes below a folder that never
// follow a link out of it (beneath.go, over os.Root), and a folder private
// to the user (private_*.go). Each OS-specific file has a Unix and a
// portable side (docs/platforms.md#the-portable-build). It imports nothing
// of this module.
package filesafe
