// Package store owns SAGA's .saga/ data: the story, epic and task model in
// both dialects (the seeds' folder epics and "<epic>--" names, upstream
// SAGA's single-file epics with flat children), loading a workspace from disk
// and editor overlays — each story's main copy and its worktree copy
// (Workspace.Story gives the live one, Workspace.Copies both) — the rules
// behind every diagnostic code, atomic writes and the repository-wide locks.
// It imports nothing else of this module but its own subpackages.
package store
