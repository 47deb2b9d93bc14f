// Package workspace owns a repository's .saga as the faces see it on disk:
// the first load, the one watch of its folders (through fswatch), the one
// funnel every disk change goes through (Service.DidModifyFiles: the
// language server's client events, its own watcher's, the dashboard's and
// its own writes alike) and the one confined reader behind it (a file or
// folder reached through a link out of the workspace is one
// unreadable-file finding, never read or watched). Each change is read
// with no lock held and handed to the face as a Change: the files read and
// the files gone, for the face to lay over its snapshot (the language
// server keeps its open buffers over them; the dashboard's Disk takes them
// as they are). docs/architecture.md#one-funnel-for-disk-changes.
package workspace
