package runs

import (
	"io"
	"os"
	"time"
)

// Process is what a worker's or an epic runner's process takes from where it
// was started: its log, its session, its environment and its clock.
type Process struct {
	OutputFile string              // the human log's copy; events go to EventsFile(OutputFile)
	Session    string              // the tmux session, for events; default $SAGA_SESSION, else a new KindSessionName
	SessionDir string              // default SessionDir(Env)
	Stdout     io.Writer           // default io.Discard
	Env        func(string) string // default os.Getenv
	Now        func() time.Time    // default time.Now
}

// Fill sets what is unset to its default; k and id name a new session.
func (p *Process) Fill(k Kind, id string) {
	if p.Env == nil {
		p.Env = os.Getenv
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Stdout == nil {
		p.Stdout = io.Discard
	}
	if p.SessionDir == "" {
		p.SessionDir = SessionDir(p.Env)
	}
	if p.Session == "" {
		p.Session = Getenv(p.Env, EnvSession)
		if p.Session == "" {
			p.Session = KindSessionName(k, id, p.Now())
		}
	}
}

// OpenLog opens the process's log (OpenLog) for a story's worker or an
// epic's runner, after making sure its session dir is the user's alone
// (MakeSessionDir): the worker keeps its checks there for the hook.
func (p *Process) OpenLog(story, epic string) (*Log, error) {
	if err := MakeSessionDir(p.SessionDir); err != nil {
		return nil, err
	}
	return OpenLog(p.OutputFile, story, epic, p.Session, p.Stdout, p.Now)
}
