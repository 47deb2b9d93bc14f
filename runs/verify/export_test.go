package verify

// The steps of Prepare and Checks.Run, for the package's external tests:
// outside the package only the one sequence (check.go) runs checks.
var (
	NewRunner = newRunner
	Protect   = protect
	RunTask   = runTask
)
