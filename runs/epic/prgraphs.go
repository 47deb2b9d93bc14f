package epic

import (
	"context"
	"os/exec"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// The graph in the pull requests of an epic's stories is rewritten with
// every story's current state whenever one of them changes state
// (control.EpicGraph, control.EditPRBody). The edits run on their own
// goroutine, so that gh's round trips never hold up the scheduling: a
// newer graph replaces one not written yet, and a PR already showing the
// graph is not edited again.

// prGraphJob is one graph to write into the stories' PRs (story → PR).
type prGraphJob struct {
	section string
	prs     map[string]string
}

// prGraphs writes the graphs the runner hands it, the newest first.
type prGraphs struct {
	r       *runner
	gh      string
	next    chan prGraphJob // holds at most the newest job
	done    chan struct{}
	last    string            // the last graph handed over
	written map[string]string // PR → the graph it shows
}

// startPRGraphs starts the writer; nil when there is nothing to write to
// (a dry run pushes nothing, or gh is missing).
func (r *runner) startPRGraphs() *prGraphs {
	if r.o.Worker.DryRun {
		return nil
	}
	gh, err := exec.LookPath(runs.Program(r.o.Env, runs.ProgramGH))
	if err != nil {
		return nil
	}
	p := &prGraphs{r: r, gh: gh, next: make(chan prGraphJob, 1), done: make(chan struct{}), written: map[string]string{}}
	go p.loop()
	return p
}

// update hands over the graph of the state st, when it differs from the
// last one.
func (p *prGraphs) update(st *readmodel.EpicStatus) {
	if p == nil || p.r.ws == nil {
		return
	}
	section := control.EpicGraph(p.r.ws, st, nil)
	if section == "" || section == p.last {
		return
	}
	p.last = section
	job := prGraphJob{section: section, prs: map[string]string{}}
	for _, s := range st.Stories {
		if s.PR != "" {
			job.prs[s.ID] = s.PR
		}
	}
	for {
		select {
		case p.next <- job:
			return
		default:
			select { // replace the job not taken yet
			case <-p.next:
			default:
			}
		}
	}
}

// close writes what is left and waits for it, at most wait.
func (p *prGraphs) close(wait time.Duration) {
	if p == nil {
		return
	}
	close(p.next)
	select {
	case <-p.done:
	case <-time.After(wait):
		p.r.log.Warn(stepEpic, "the pull requests' graphs are still being written; not waiting longer")
	}
}

func (p *prGraphs) loop() {
	defer close(p.done)
	for job := range p.next {
		for story, pr := range job.prs {
			if p.written[pr] == job.section {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_, err := control.EditPRBody(ctx, p.r.root, story, p.gh, p.r.root, pr, func(body string) string {
				return control.WithGraph(body, job.section)
			})
			cancel()
			if err != nil {
				p.r.log.Warn(stepEpic, "%s: the graph in its pull request: %v", story, err)
				continue
			}
			p.written[pr] = job.section
		}
	}
}
