package store

// Documents as SAGA writes them: field order follows the schemas, optional
// fields are left out when empty. Reading goes through the tolerant parser;
// these are only for files saga-lsp creates. Story and epic documents hold
// only the fields upstream SAGA's strict schemas accept: no "status" (a
// story's status is derived from its tasks).

type TaskDoc struct {
	ID          string   `json:"id"`
	Subject     string   `json:"subject"`
	Description string   `json:"description"`
	ActiveForm  string   `json:"activeForm,omitempty"`
	Status      string   `json:"status"`
	BlockedBy   []string `json:"blockedBy"`
	Priority    string   `json:"priority,omitempty"`
	Guidance    string   `json:"guidance,omitempty"`
	DoneWhen    string   `json:"doneWhen,omitempty"`
	Checks      []string `json:"checks,omitempty"`
	// CheckTimeout is seconds (0: the default, left out).
	CheckTimeout float64 `json:"checkTimeout,omitempty"`
	// Review marks a review task saga-lsp wrote (docs/review.md).
	Review *ReviewSource `json:"review,omitempty"`
}

type StoryDoc struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Guidance    string `json:"guidance,omitempty"`
	DoneWhen    string `json:"doneWhen,omitempty"`
	Avoid       string `json:"avoid,omitempty"`
	Epic        string `json:"epic,omitempty"`
}

type EpicDoc struct {
	ID          string     `json:"id"`
	Title       string     `json:"title"`
	Description string     `json:"description"`
	Children    []ChildDoc `json:"children"`
}

type ChildDoc struct {
	ID        string   `json:"id"`
	BlockedBy []string `json:"blockedBy"`
}
