package review

import "github.com/saga-ai/saga-lsp/store"

type Outcome struct {
	TaskID  string
	Source  *store.ReviewSource
	Result  string
	Commit  string
	Files   []string
	Checks  []string
	Answer  string
	Why     string
}

const (
	ResultDone     = "done"
	ResultAnswered = "answered"
	ResultNotDone  = "not-done"
)
