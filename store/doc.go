// Package store owns SAGA's .saga/ data: the story, epic and task model, loading
// a workspace from disk and editor overlays, the rules behind every diagnostic
// code, atomic writes and the repository-wide locks. It imports nothing else of
// this module but its own subpackages.
package store
