// Package store owns SAGA's .saga/ data and nothing else: the story, epic
// and task model in both dialects (the seeds' folder epics and "<epic>--"
// names, upstream SAGA's single-file epics with flat children), loading a
// workspace from disk and editor overlays — each story's main copy and its
// worktree copy (Workspace.Story gives the live one, Workspace.Copies both)
// — the rules behind every diagnostic code, the one validated status/field
// write, atomic writes, reads and appends in a tree someone else writes (a
// story's worktree: no link followed, regular files only; inside.go), the
// repository-wide locks and the liveness of their holders, and a light reader of one story (brief.go) for callers that must
// not pay for a workspace. It imports nothing else of this module but its
// own subpackages (jsonc, schema, plan).
package store
