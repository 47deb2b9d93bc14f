package commands

// `saga-lsp status [<story>]`: stories with their tasks in Claude Code's
// TaskList form, the worker state (from its lock, its tmux session and its
// events file) and the PR. While a worker runs, statuses come from the
// story's worktree copy, where the worker writes.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/store"
)

// Worker states (WorkerInfo.State). A finished run's state is its worker.end
// status: completed, failed, timeout, blocked or stopped.
const (
	StateIdle     = "idle"     // no run recorded in the session folder
	StateStarting = "starting" // a session or process exists, the lock is not taken yet
	StateRunning  = "running"  // the worker holds its lock
	StateDied     = "died"     // the last run ended without a worker.end event (killed)
)

// WorkerInfo is the state of a story's worker.
type WorkerInfo struct {
	Running    bool   `json:"running"`
	PID        int    `json:"pid"`        // 0 when unknown
	Session    string `json:"session"`    // tmux session of the running or last run
	OutputFile string `json:"outputFile"` // its human log
	State      string `json:"state"`      // idle, starting, running, died, or the last run's worker.end status
	Cycle      int    `json:"cycle"`      // the current (or last) headless run, 0 before the first
	ExitCode   *int   `json:"exitCode"`   // the last run's exit code; null while running or unknown
	Started    string `json:"started"`    // RFC 3339 time of worker.start, "" when unknown
}

// TaskStatus is one task in TaskList form.
type TaskStatus struct {
	ID        string   `json:"id"`
	Subject   string   `json:"subject"`
	Status    string   `json:"status"`
	BlockedBy []string `json:"blockedBy"` // unfinished blockers only, as in TaskList
}

// StoryStatus is one story's line (and, on request, its tasks).
type StoryStatus struct {
	ID       string       `json:"id"`
	Title    string       `json:"title"`
	Status   string       `json:"status"` // as the tasks show it (Story.EffectiveStatus)
	Done     int          `json:"done"`
	Total    int          `json:"total"`
	Epic     string       `json:"epic"`
	PR       string       `json:"pr"`
	Branch   string       `json:"branch"`
	Worktree string       `json:"worktree"`
	Worker   WorkerInfo   `json:"worker"`
	Tasks    []TaskStatus `json:"tasks,omitzero"` // only when asked for

	// FromWorktree is set when the statuses come from the worktree copy.
	FromWorktree bool `json:"-"`
}

// Status is the result of GetStatus.
type Status struct {
	Stories []StoryStatus `json:"stories"`

	single     bool
	epicTitles map[string]string
}

// StatusOptions configure GetStatus.
type StatusOptions struct {
	Root       string
	Story      string // one story (with its tasks); "" for every story
	Tasks      bool   // include tasks for every story
	SessionDir string // default SessionDir(Env)
	Tmux       *Tmux  // default FindTmux(Env); sessions are not listed without tmux
	Env        func(string) string
	Parser     *store.Parser // default store.NewParser()
}

// GetStatus reads the stories, their worktree copies, tmux sessions, worker
// locks and events files. An unknown or invalid story is a *UsageError.
func GetStatus(ctx context.Context, o StatusOptions) (*Status, error) {
	p := o.Parser
	if p == nil {
		var err error
		if p, err = store.NewParser(); err != nil {
			return nil, err
		}
	}
	if o.SessionDir == "" {
		o.SessionDir = SessionDir(o.Env)
	}
	var sessions map[string][]string
	t := o.Tmux
	if t == nil {
		var err error
		if t, err = FindTmux(ctx, o.Env); err != nil && !errors.Is(err, ErrNoTmux) {
			return nil, err
		}
	}
	if t != nil {
		names, err := t.Sessions(ctx)
		if err != nil {
			return nil, err
		}
		sessions = storySessions(names)
	}
	res := &Status{Stories: []StoryStatus{}, epicTitles: map[string]string{}}
	if o.Story != "" {
		if !store.ValidCanonical(o.Story) {
			return nil, usagef("invalid story name %q: use lowercase ids of letters, digits and single dashes, joined by \"--\"", o.Story)
		}
		if err := storyExists(o.Root, o.Story); err != nil {
			return nil, err
		}
		s, err := p.LoadStory(o.Root, o.Story)
		if err != nil {
			return nil, usagef("%v", err)
		}
		res.single = true
		res.Stories = append(res.Stories, storyStatus(p, o.Root, s, true, latestRun(o.SessionDir, o.Story), sessions[o.Story]))
		return res, nil
	}
	ws, err := p.Load(o.Root)
	if err != nil {
		return nil, err
	}
	runs := listRuns(o.SessionDir)
	for _, id := range ws.SortedStoryIDs() {
		var last *runSummary
		if rs := runs[id]; len(rs) > 0 {
			last = readEvents(rs[len(rs)-1].events)
		}
		res.Stories = append(res.Stories, storyStatus(p, o.Root, ws.Story(id), o.Tasks, last, sessions[id]))
	}
	for _, id := range ws.SortedEpicIDs() {
		res.epicTitles[id] = ws.Epic(id).Title
	}
	// Grouped by epic (epics by id, standalone stories last), then by id.
	slices.SortStableFunc(res.Stories, func(a, b StoryStatus) int {
		switch {
		case a.Epic == b.Epic:
			return strings.Compare(a.ID, b.ID)
		case a.Epic == "":
			return 1
		case b.Epic == "":
			return -1
		}
		return strings.Compare(a.Epic, b.Epic)
	})
	return res, nil
}

// StoryWorker reports one story's worker state without reading its files:
// the cheap check behind code lenses (run or stop). Only Root, SessionDir,
// Tmux and Env of o are used.
func StoryWorker(ctx context.Context, story string, o StatusOptions) (WorkerInfo, error) {
	if !store.ValidCanonical(story) {
		return WorkerInfo{}, usagef("invalid story name %q", story)
	}
	if o.SessionDir == "" {
		o.SessionDir = SessionDir(o.Env)
	}
	t := o.Tmux
	if t == nil {
		var err error
		if t, err = FindTmux(ctx, o.Env); err != nil && !errors.Is(err, ErrNoTmux) {
			return WorkerInfo{}, err
		}
	}
	var sessions []string
	if t != nil {
		var err error
		if sessions, err = t.StorySessions(ctx, story); err != nil {
			return WorkerInfo{}, err
		}
	}
	return workerInfo(o.Root, story, latestRun(o.SessionDir, story), sessions), nil
}

// storyView returns the story as its worktree copy has it when the worker
// made one (.saga/worktrees/<story>/.saga/stories/<story>/), else main.
func storyView(p *store.Parser, root string, main *store.Story) (*store.Story, bool) {
	wt := filepath.Join(root, ".saga", "worktrees", main.ID)
	if fi, err := os.Stat(filepath.Join(wt, ".saga", "stories", main.ID)); err == nil && fi.IsDir() {
		if s, err := p.LoadStory(wt, main.ID); err == nil {
			return s, true
		}
	}
	return main, false
}

func storyStatus(p *store.Parser, root string, main *store.Story, withTasks bool, last *runSummary, sessions []string) StoryStatus {
	view, fromWT := storyView(p, root, main)
	st := StoryStatus{
		ID: main.ID, Title: first(view.Title, main.Title), Status: view.EffectiveStatus(),
		Done: view.Done(), Total: len(view.Tasks), Epic: main.EpicID(),
		PR: first(view.PR, main.PR), Branch: first(view.Branch, main.Branch), Worktree: first(view.Worktree, main.Worktree),
		FromWorktree: fromWT,
	}
	if st.PR == "" && last != nil {
		st.PR = last.PR
	}
	st.Worker = workerInfo(root, main.ID, last, sessions)
	if withTasks {
		st.Tasks = make([]TaskStatus, 0, len(view.Tasks))
		for _, t := range view.Tasks {
			ts := TaskStatus{ID: t.ID, Subject: t.Subject, Status: t.Status, BlockedBy: []string{}}
			for _, b := range t.BlockedBy {
				if bt := view.Task(b.ID); (bt != nil && bt.Status == store.StatusCompleted) || slices.Contains(ts.BlockedBy, b.ID) {
					continue
				}
				ts.BlockedBy = append(ts.BlockedBy, b.ID)
			}
			st.Tasks = append(st.Tasks, ts)
		}
	}
	return st
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// workerInfo combines the worker lock, the story's live tmux sessions
// (oldest first) and its newest events file.
func workerInfo(root, story string, last *runSummary, sessions []string) WorkerInfo {
	w := WorkerInfo{State: StateIdle}
	// The live session: the newest one not known to have ended.
	live := ""
	for _, s := range slices.Backward(sessions) {
		if last != nil && last.Session == s && last.Ended {
			continue
		}
		live = s
		break
	}
	useRun := func() {
		w.Session, w.OutputFile, w.Cycle = last.Session, last.OutputFile, last.Cycle
		if !last.StartTime.IsZero() {
			w.Started = last.StartTime.UTC().Format(time.RFC3339)
		}
	}
	lockPID, held, err := workerLock(root, story, false)
	switch {
	case err == nil && held:
		w.Running, w.PID, w.State = true, lockPID, StateRunning
		if last != nil && !last.Ended && (last.PID == lockPID || lockPID == 0) {
			useRun()
			if w.PID == 0 {
				w.PID = last.PID
			}
		} else {
			w.Session = live
		}
	case last != nil && !last.Ended && processAlive(last.PID):
		// Before the lock step, or after the lock's release while the
		// worker writes its end.
		w.Running, w.PID, w.State = true, last.PID, StateStarting
		if last.Locked {
			w.State = StateRunning
		}
		useRun()
	case live != "":
		w.Running, w.State, w.Session = true, StateStarting, live
		if last != nil && last.Session == live {
			useRun()
			w.PID = last.PID
		}
	case last == nil:
	case last.Ended:
		useRun()
		w.PID, w.State, w.ExitCode = last.PID, last.Status, last.ExitCode
		if w.State == "" {
			w.State = "ended"
		}
	default:
		useRun()
		w.PID, w.State = last.PID, StateDied
	}
	return w
}

// ---------------------------------------------------------------------------
// events files

// workerEvent is the part of a worker event (worker/events.go) status reads.
type workerEvent struct {
	Time       time.Time `json:"time"`
	Story      string    `json:"story"`
	Session    string    `json:"session"`
	Event      string    `json:"event"`
	Step       string    `json:"step"`
	Level      string    `json:"level"`
	Cycle      int       `json:"cycle"`
	Status     string    `json:"status"`
	ExitCode   *int      `json:"exitCode"`
	PR         string    `json:"pr"`
	OutputFile string    `json:"outputFile"`
	PID        int       `json:"pid"`
}

// runSummary is what one events file says about its run.
type runSummary struct {
	EventsFile string
	OutputFile string
	Session    string
	Story      string
	StartTime  time.Time
	PID        int
	Locked     bool // the worker got past its lock
	Ended      bool // worker.end seen
	Status     string
	ExitCode   *int
	Cycle      int
	PR         string
}

// readEvents summarises an events file; nil when it is missing or empty.
// Lines that do not parse (a line being written) are skipped.
func readEvents(path string) *runSummary {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	s := &runSummary{EventsFile: path, OutputFile: strings.TrimSuffix(path, EventsSuffix)}
	seen := false
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 && line[0] == '{' {
			var e workerEvent
			if json.Unmarshal(line, &e) == nil && e.Event != "" {
				seen = true
				s.apply(e)
			}
		}
		if err != nil {
			break
		}
	}
	if !seen {
		return nil
	}
	return s
}

func (s *runSummary) apply(e workerEvent) {
	if s.Session == "" {
		s.Session = e.Session
	}
	if s.Story == "" {
		s.Story = e.Story
	}
	if e.PR != "" {
		s.PR = e.PR
	}
	if e.Cycle > s.Cycle {
		s.Cycle = e.Cycle
	}
	switch e.Event {
	case "worker.start":
		s.StartTime, s.PID = e.Time, e.PID
		if e.OutputFile != "" {
			s.OutputFile = e.OutputFile
		}
	case "step":
		if e.Step != "lock" && e.Step != "start" || (e.Step == "lock" && e.Level != "warn") {
			s.Locked = true
		}
	case "run.start", "run.end", "task.status", "run.output":
		s.Locked = true
	case "worker.end":
		s.Ended, s.Status, s.ExitCode = true, e.Status, e.ExitCode
	}
}

// runFile is one events file in the session folder.
type runFile struct {
	session string
	ms      int64
	events  string
}

// listRuns finds the events files of the session folder
// (saga-story-<story>-<ms>.log.events.jsonl), by story, oldest first.
func listRuns(dir string) map[string][]runFile {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := map[string][]runFile{}
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".log"+EventsSuffix)
		if !ok || de.IsDir() {
			continue
		}
		if story, ms, ok := ParseSessionName(name); ok {
			out[story] = append(out[story], runFile{name, ms, filepath.Join(dir, de.Name())})
		}
	}
	for _, rs := range out {
		slices.SortFunc(rs, func(a, b runFile) int {
			if a.ms != b.ms {
				if a.ms < b.ms {
					return -1
				}
				return 1
			}
			return strings.Compare(a.session, b.session)
		})
	}
	return out
}

// storyRuns lists one story's events files, oldest first.
func storyRuns(dir, story string) []runFile {
	matches, _ := filepath.Glob(filepath.Join(dir, SessionPrefix+story+"-*.log"+EventsSuffix))
	var rs []runFile
	for _, m := range matches {
		name := strings.TrimSuffix(filepath.Base(m), ".log"+EventsSuffix)
		if s, ms, ok := ParseSessionName(name); ok && s == story {
			rs = append(rs, runFile{name, ms, m})
		}
	}
	slices.SortFunc(rs, func(a, b runFile) int {
		switch {
		case a.ms < b.ms:
			return -1
		case a.ms > b.ms:
			return 1
		}
		return strings.Compare(a.session, b.session)
	})
	return rs
}

// latestRun summarises the story's newest events file, or nil.
func latestRun(dir, story string) *runSummary {
	rs := storyRuns(dir, story)
	if len(rs) == 0 {
		return nil
	}
	return readEvents(rs[len(rs)-1].events)
}

// runOf finds the run of worker pid among the story's newest events files,
// else the newest run.
func runOf(dir, story string, pid int) *runSummary {
	rs := storyRuns(dir, story)
	var newest *runSummary
	for i := len(rs) - 1; i >= 0 && i >= len(rs)-5; i-- {
		s := readEvents(rs[i].events)
		if s == nil {
			continue
		}
		if newest == nil {
			newest = s
		}
		if pid > 0 && s.PID == pid {
			return s
		}
	}
	return newest
}

// ---------------------------------------------------------------------------
// text output

// WriteText prints the status: one story with header and tasks, or every
// story grouped by epic (with tasks when they were asked for).
func (s *Status) WriteText(w io.Writer) error {
	var b strings.Builder
	if s.single && len(s.Stories) == 1 {
		writeStoryText(&b, s.Stories[0])
	} else {
		s.writeListText(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeStoryText(b *strings.Builder, st StoryStatus) {
	fmt.Fprintf(b, "%s — %s\n", st.ID, st.Title)
	from := ""
	if st.FromWorktree {
		from = " (from the worktree)"
	}
	fmt.Fprintf(b, "status:   %s, %d/%d tasks done%s\n", st.Status, st.Done, st.Total, from)
	if st.Epic != "" {
		fmt.Fprintf(b, "epic:     %s\n", st.Epic)
	}
	if st.PR != "" {
		fmt.Fprintf(b, "PR:       %s\n", st.PR)
	}
	if st.Branch != "" {
		fmt.Fprintf(b, "branch:   %s\n", st.Branch)
	}
	if st.Worktree != "" {
		fmt.Fprintf(b, "worktree: %s\n", st.Worktree)
	}
	fmt.Fprintf(b, "worker:   %s\n", workerText(st.Worker, true))
	if st.Worker.OutputFile != "" {
		fmt.Fprintf(b, "output:   %s\n", st.Worker.OutputFile)
	}
	if len(st.Tasks) > 0 {
		b.WriteString("\n")
		writeTasksText(b, st.Tasks, "")
	} else if st.Total == 0 {
		fmt.Fprintf(b, "\nno tasks: add one with `saga-lsp new task %s <id> --subject …`\n", st.ID)
	}
}

// writeTasksText prints TaskList's text form:
// #<id> [<status>] <subject> [blocked by #a, #b].
func writeTasksText(b *strings.Builder, tasks []TaskStatus, indent string) {
	for _, t := range tasks {
		status := t.Status
		if status == "" {
			status = "unknown"
		}
		fmt.Fprintf(b, "%s#%s [%s] %s", indent, t.ID, status, t.Subject)
		if len(t.BlockedBy) > 0 {
			b.WriteString(" [blocked by #" + strings.Join(t.BlockedBy, ", #") + "]")
		}
		b.WriteString("\n")
	}
}

func (s *Status) writeListText(b *strings.Builder) {
	if len(s.Stories) == 0 {
		b.WriteString("no stories: create one with `saga-lsp new story <name> --title …`\n")
		return
	}
	width, swidth := 0, 0
	for _, st := range s.Stories {
		width = max(width, len(st.ID))
		swidth = max(swidth, len(st.Status)+2)
	}
	group := "\x00"
	for _, st := range s.Stories {
		if st.Epic != group {
			if group != "\x00" {
				b.WriteString("\n")
			}
			group = st.Epic
			switch title, ok := s.epicTitles[st.Epic]; {
			case st.Epic == "":
				b.WriteString("(no epic)\n")
			case ok && title != "":
				fmt.Fprintf(b, "%s — %s\n", st.Epic, title)
			default:
				fmt.Fprintf(b, "%s\n", st.Epic)
			}
		}
		fmt.Fprintf(b, "  %-*s %-*s %s  %s\n", width, st.ID, swidth, "["+st.Status+"]",
			strconv.Itoa(st.Done)+"/"+strconv.Itoa(st.Total), workerText(st.Worker, false))
		if len(st.Tasks) > 0 {
			writeTasksText(b, st.Tasks, "      ")
		}
	}
}

// workerText describes the worker state; long adds session and start time.
func workerText(w WorkerInfo, long bool) string {
	var parts []string
	if w.PID > 0 && (w.Running || long) {
		parts = append(parts, "pid "+strconv.Itoa(w.PID))
	}
	if long && w.Session != "" {
		parts = append(parts, "session "+w.Session)
	}
	if long && w.Started != "" {
		if t, err := time.Parse(time.RFC3339, w.Started); err == nil {
			parts = append(parts, "started "+clock(t))
		}
	}
	if w.Cycle > 0 {
		parts = append(parts, "cycle "+strconv.Itoa(w.Cycle))
	}
	details := ""
	if len(parts) > 0 {
		details = " (" + strings.Join(parts, ", ") + ")"
	}
	switch w.State {
	case StateRunning, StateStarting:
		return w.State + details
	case StateIdle:
		return "not running"
	case StateDied:
		if !long {
			return "not running; last run died"
		}
		return "not running; the last run ended without a result (killed?)" + details
	}
	if w.ExitCode != nil {
		parts = append([]string{"exit " + strconv.Itoa(*w.ExitCode)}, parts...)
	}
	if !long {
		parts = parts[:min(len(parts), 1)]
	}
	details = ""
	if len(parts) > 0 {
		details = " (" + strings.Join(parts, ", ") + ")"
	}
	return "not running; last run " + w.State + details
}

// clock shows a time of today as 15:04:05, else with its date.
func clock(t time.Time) string {
	t = t.Local()
	if y, m, d := time.Now().Date(); t.Year() == y && t.Month() == m && t.Day() == d {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04")
}
