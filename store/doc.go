// Package store owns SAGA's .saga/ data and nothing else: the story, epic
// and task model in both dialects (the seeds' folder epics and "<epic>--"
// names, upstream SAGA's single-file epics with flat children), loading a
// workspace from disk and editor overlays — each story's main copy and its
// worktree copy (Workspace.Story gives the live one, Workspace.Copies both)
// — the rules behind every diagnostic code, the one validated status/field
// write, handoffs between stories, and a light reader of one story
// (brief.go) for callers that must not pay for a workspace. How a file is
// written, locked or read safely is internal/filesafe's, the one package of
// this module it imports besides its own subpackages (jsonc, schema, plan,
// glob).
package store
