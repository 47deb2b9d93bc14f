package readmodel

// Started describes a worker started in tmux (control.StartStory) or a
// runner (control.StartEpic): what a face follows (runs/watch).
type Started struct {
	Story      string `json:"story,omitempty"`
	Epic       string `json:"epic,omitempty"`
	Session    string `json:"session"`
	OutputFile string `json:"outputFile"`
	EventsFile string `json:"eventsFile"`
	Base       string `json:"base,omitempty"` // a story's: the branch it starts from
	PID        int    `json:"pid"`            // from the worker.start event; 0 when it had not reported yet
	// Attach is the command to watch the session (not in JSON: tools get
	// the session name).
	Attach string `json:"-"`
	// Finished is set when the worker completed (exit 0) while run waited.
	Finished bool `json:"-"`
	// Backend is where the worker runs ("" or BackendTmux: this machine's
	// tmux); URL, when it runs elsewhere, the page of its run.
	Backend string `json:"backend,omitempty"`
	URL     string `json:"url,omitempty"`
}
