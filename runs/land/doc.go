// Package land owns landing an epic's pull requests (docs/landing.md):
// what makes a story ready to land — its PR approved as the repository
// requires, GitHub's checks green on its head commit, its merge state
// clean, every blocker landed — read for all of an epic's PRs in one
// GraphQL query through the user's gh, with the repository's native stacks
// in one REST call (graphql.go, read.go, ready.go); a pass's decisions, a
// function of that snapshot and of what each action did (decide.go:
// Decide, which the property test drives against a model of GitHub);
// landing the ready ones bottom-up with the repository's merge method or
// through its merge queue (enqueued, followed to their merge or ejection),
// never inside a stack; and, once a blocker landed, its dependents
// following the default branch: rebuilt on it with control.Restack, their
// PR retargeted, their checks run again before they count as ready
// (land.go). Why a story was not landed is kept in its run record's land
// part (runs.LandRecord), which every face reads through the read model.
// doctor's line on the method is MethodCheck (doctor.go).
package land
