package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/store"
)

// Record is the durable end of a story's last run, kept under the
// repository's git dir (<git common dir>/saga-lsp/runs/<story>.json): the
// session dir may be a tmpfs that a reboot empties, and the epic runner must
// still know that a story completed (its statuses are committed on its
// branch too).
type Record struct {
	Version  int       `json:"version,omitempty"` // FormatVersion; 0 in the records of earlier releases
	Story    string    `json:"story"`
	Session  string    `json:"session"`
	Status   string    `json:"status"` // the worker.end status
	ExitCode int       `json:"exitCode"`
	Ended    time.Time `json:"ended"`
	// Branch, Worktree (relative to the checkout) and PR are the run's:
	// story.json kept them before issue 23 (readers still take them from
	// there for such runs).
	Branch   string `json:"branch,omitempty"`
	Worktree string `json:"worktree,omitempty"`
	Base     string `json:"base,omitempty"`
	// Reference is the run's reference commit R (a full hash): the tip of
	// the base (for a stacked story, of the epic's base) when the run
	// started, which the worker made the story branch's fork point. The
	// definitions and checks that count are read at it, never at a ref an
	// agent could have moved. Empty in records of saga-lsp before issue 22.
	Reference string `json:"reference,omitempty"`
	PR        string `json:"pr,omitempty"`
	// PRState is the pull request's state as last seen, in gh's words
	// (OPEN, MERGED, CLOSED): set by the worker that opened or reused it
	// (OPEN) and by whoever asked gh since (RecordPRState: the epic runner
	// waiting for merges, `clean`), so that readers of local evidence
	// (readmodel.Evidence) know a merged PR without a network call.
	PRState   string    `json:"prState,omitempty"`
	PRStateAt time.Time `json:"prStateAt,omitzero"`
	// NoPR is why the run opened no pull request (its KindPRMissing), so
	// that `status` still says it when the session dir is emptied; cleared
	// when `run <story>` opens it later.
	NoPR *NoPR `json:"noPR,omitempty"`
	// Protected are the protected files the run's end found changed that
	// keep the PR a draft (docs/worker.md#protected-files).
	Protected []ProtectedFile `json:"protected,omitempty"`
	Cost      float64         `json:"cost,omitempty"` // this run's headless runs (USD)
	// Spent is what every headless run of the story cost up to this one,
	// this one included (USD): reruns count (docs/commands.md#epic-runs-run--follow--status--stop-epic).
	// 0 in records of saga-lsp before it (Cost is all there is then).
	Spent  float64 `json:"spent,omitempty"`
	DryRun bool    `json:"dryRun,omitempty"`
	// Why says, for a run that did not complete, what stopped it and the
	// next step (its worker.end message).
	Why string `json:"why,omitempty"`
	// Review is the story's review loop as its last round left it
	// (docs/review.md): carried from record to record, as Spent is.
	Review *ReviewRecord `json:"review,omitempty"`
	// Restack is what the last `saga-lsp restack` of the story did when it
	// did not leave it ready (docs/restack.md): its checks failed on the
	// rebuilt branch, or the rebuild conflicted and a task asks the next
	// run to resolve it. Nil when the last restack passed; a worker's end
	// (a later run) supersedes it.
	Restack *RestackRecord `json:"restack,omitempty"`
	// Land is what the last `saga-lsp land` found of the story when it
	// did not land it (docs/landing.md): a refusal or a failure, with its
	// reason and the next step. Cleared when the story lands.
	Land *LandRecord `json:"land,omitempty"`
	// History is the story's runs that wrote a record, oldest first, one
	// line each, this record's own run last: carried from record to record,
	// as Spent is, for the epic's counted outcome (runs/stats,
	// docs/landing.md#the-epics-outcome-counted). Nil in records of
	// saga-lsp before it. At most MaxHistory lines: AddRun.
	History []RunLine `json:"history,omitempty"`
	// HistoryDropped counts the runs AddRun dropped from History past
	// MaxHistory (the first run is always kept).
	HistoryDropped int `json:"historyDropped,omitempty"`
}

// RunLine is one run of a story as its end left it: what the counted
// outcome needs, and nothing read from its transcript or log.
type RunLine struct {
	Session string    `json:"session"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	Status  string    `json:"status"` // the worker.end status
	// Review: the run was a review round (run --review).
	Review bool `json:"review,omitempty"`
	// Cost is what its headless runs reported they cost (USD), Claude
	// Code's result message's total_cost_usd; CostUnknown counts its
	// headless runs that reported none (no result message: killed, cut).
	Cost        float64 `json:"cost,omitempty"`
	CostUnknown int     `json:"costUnknown,omitempty"`
	// Refused counts, by command, the checks that refused a task's
	// completion in the run (the TaskCompleted gate's) or failed on the
	// final tree at its end.
	Refused map[string]int `json:"refused,omitempty"`
}

// MaxHistory bounds a record's History: a record is read by every face,
// and a story run more often than this keeps its first run and its last.
const MaxHistory = 100

// AddRun appends line to rec's History, dropping the second-oldest line
// past MaxHistory.
func AddRun(rec *Record, line RunLine) {
	rec.History = append(rec.History, line)
	if over := len(rec.History) - MaxHistory; over > 0 {
		rec.History = append(rec.History[:1], rec.History[1+over:]...)
		rec.HistoryDropped += over
	}
}

// LandRecord is why `saga-lsp land` stopped a story (docs/landing.md).
type LandRecord struct {
	At time.Time `json:"at"`
	// State is the readiness that stopped it: "waiting" (a blocker has not
	// landed), "not ready" (a review, a check, the merge state, a draft),
	// "needs CI" (no check ran on its head commit), "refused" (GitHub
	// refused the merge, or the story is in a native stack), "failed"
	// (following main failed or conflicted), "queued" (in the merge
	// queue, at Head), "ejected" (the merge queue ejected it at Head).
	State string `json:"state"`
	Why   string `json:"why"`
	// Head is the PR's head commit it was judged at.
	Head string `json:"head,omitempty"`
}

// UpdateLand sets (nil: clears) the land part of the story's last real
// run's record; without a record there is no run, and nothing is
// written. Unchanged, nothing is written either.
func UpdateLand(root, story string, lr *LandRecord) error {
	rec, ok := ReadRecord(root, story)
	if !ok {
		return nil
	}
	if same := rec.Land == nil && lr == nil || rec.Land != nil && lr != nil && rec.Land.State == lr.State && rec.Land.Why == lr.Why && rec.Land.Head == lr.Head; same {
		return nil
	}
	rec.Land = lr
	return WriteRecord(root, rec)
}

// RestackRecord is a restack that left the story not ready.
type RestackRecord struct {
	At time.Time `json:"at"`
	// Onto are the branches it was rebuilt on (a blocker's story/<x>, or
	// several), Tips their tips then, in the same order.
	Onto []string `json:"onto"`
	Tips []string `json:"tips"`
	// Head is the story branch's tip the restack started from; New the
	// rebuilt tip (empty after a conflict: the branch was left at Head).
	Head string `json:"head"`
	New  string `json:"new,omitempty"`
	// Conflicts are the files the rebuild conflicted in; Task the
	// conflict-resolution task saga-lsp wrote into the story's folder and
	// Digest its content's SHA-256, by which a worker tells it from an
	// agent's edit (docs/restack.md#a-conflict).
	Conflicts []string `json:"conflicts,omitempty"`
	Task      string   `json:"task,omitempty"`
	Digest    string   `json:"digest,omitempty"`
	// Why says what is wrong and the next step.
	Why string `json:"why"`
}

// ReviewRecord is what saga-lsp knows of a story's review loop, written by
// whoever read the review (a round, a watcher): the faces show it from here
// and never ask GitHub themselves.
type ReviewRecord struct {
	// Rounds is how many review rounds ran (one that found nothing new to
	// address is not a round).
	Rounds int `json:"rounds,omitempty"`
	// Tasks are the review tasks saga-lsp wrote, by id, in every round; Commit
	// is the commit on the story branch holding their latest versions as
	// saga-lsp wrote them (the definitions rule restores them from it).
	Tasks  []string `json:"tasks,omitempty"`
	Commit string   `json:"commit,omitempty"`
	// Requests is what the last read of the review counted and left to
	// address: open requests whose task is not completed; ChangesRequested
	// of them are writers' reviews in state "changes requested".
	Requests         int `json:"requests,omitempty"`
	ChangesRequested int `json:"changesRequested,omitempty"`
	// Ignored counts what the last read did not count.
	Ignored ReviewIgnored `json:"ignored,omitzero"`
	// Replied are the replies posted, one per task revision
	// ("<task>@<updatedAt>"): never two for one.
	Replied []string `json:"replied,omitempty"`
	// NeedsYou, when set, says why the loop stopped for its person (past
	// --max-review-rounds, or a round without progress); said once, in
	// every face, until a person acts (a new review, run --review).
	NeedsYou string    `json:"needsYou,omitempty"`
	ReadAt   time.Time `json:"readAt,omitzero"`
	// Addressed is the updatedAt (GitHub's clock) of the newest writer's
	// "changes requested" review a round was started for — by a watcher
	// before it starts the round, by `run --review` as its round reads the
	// review: a watcher starts a round only for a newer one, so nothing is
	// dispatched twice (docs/review.md#watching).
	Addressed time.Time `json:"addressed,omitzero"`
}

// ReviewIgnored counts the comments and reviews a read did not count.
type ReviewIgnored struct {
	Bots       int `json:"bots,omitempty"`
	NonWriters int `json:"nonWriters,omitempty"`
	Hidden     int `json:"hidden,omitempty"`
}

// Spent is what every headless run of a story has cost (USD): the total
// its record keeps, plus the newest run (last, nil for none) when the
// record does not hold it yet — a worker still running, or one killed
// before it wrote its record.
func Spent(rec Record, haveRec bool, last *Run) float64 {
	spent := 0.0
	if haveRec {
		spent = max(Cost(rec.Spent), Cost(rec.Cost))
	}
	switch {
	case last == nil:
	case !haveRec || last.Session != rec.Session:
		spent += Cost(last.Cost)
	default: // the recorded run (a record of an earlier release may lack its cost)
		spent = max(spent, Cost(last.Cost))
	}
	return spent
}

// Cost is a reported cost as it counts towards a spend: a negative one (or
// NaN) counts nothing, so that no run can lower an epic's --max-cost spend.
func Cost(usd float64) float64 {
	if !(usd > 0) {
		return 0
	}
	return usd
}

// RecordDir is the folder of the run records of the repository holding
// root, for a watcher of them.
func RecordDir(root string) (string, error) { return recordDir(root) }

// recordDir holds the run records of the repository holding root, in
// saga-lsp's folder of it (filesafe.StateDir): inside its git dir, which no
// story's sandbox may write (docs/security.md).
func recordDir(root string) (string, error) {
	state, err := filesafe.StateDir(root)
	if err != nil {
		return "", err
	}
	return filepath.Join(state, "runs"), nil
}

// ReadCacheDir holds what a reader of the repository holding root keeps
// for the next (the story folders read from branches, by commit): beside
// the run records, inside the git dir no story's sandbox may write;
// checked as trustedRecordDir checks the records, since what it holds is
// believed. Not cache/, where an earlier saga-lsp kept stories' build
// caches that `clean` removes.
func ReadCacheDir(root string) (string, error) {
	runsDir, err := recordDir(root)
	if err != nil {
		return "", err
	}
	return privateOrAbsent(filepath.Join(filepath.Dir(runsDir), "readcache"), "read cache")
}

// trustedRecordDir is recordDir when it is the user's folder that no one
// else may write (a record there decides which stories an epic runs).
func trustedRecordDir(root string) (string, error) {
	dir, err := recordDir(root)
	if err != nil {
		return "", err
	}
	return privateOrAbsent(dir, "run records")
}

// privateOrAbsent is dir when it is the user's folder that no one else
// may write (ownedPrivate), or not there yet; what names it in the error.
func privateOrAbsent(dir, what string) (string, error) {
	if err := ownedPrivate(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return dir, nil
}

// recordFile is the record's file in dir: <story>.json for a real run,
// <story>.dry.json for a dry run — no story id has a dot, so the two never
// meet, and a dry run's end is never read as the story's (docs/worker.md#dry-runs).
func recordFile(dir, story string, dry bool) string {
	if dry {
		return filepath.Join(dir, story+".dry.json")
	}
	return filepath.Join(dir, story+".json")
}

// RecordFiles are the story's record files, real and dry, whether they
// exist or not (reset removes them).
func RecordFiles(root, story string) ([]string, error) {
	if !store.ValidCanonical(story) {
		return nil, fmt.Errorf("invalid story name %q", story)
	}
	dir, err := recordDir(root)
	if err != nil {
		return nil, err
	}
	return []string{recordFile(dir, story, false), recordFile(dir, story, true)}, nil
}

// WriteRecord stores a story's record (atomically, replacing the last one
// of its kind: a dry run's record is kept apart, see recordFile).
func WriteRecord(root string, r Record) error {
	if !store.ValidCanonical(r.Story) {
		return fmt.Errorf("invalid story name %q", r.Story)
	}
	dir, err := trustedRecordDir(root)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("run record: %w", err)
	}
	r.Version = FormatVersion
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return filesafe.WriteFileAtomic(recordFile(dir, r.Story, r.DryRun), append(data, '\n'), 0o644)
}

// PR states as gh prints them (`gh pr view --json state`).
const (
	PROpen   = "OPEN"
	PRMerged = "MERGED"
	PRClosed = "CLOSED"
)

// RecordPRState keeps state, seen at at, as the PR state of the story's
// last real run's record; without a record there is no run to say it of,
// and nothing is written.
func RecordPRState(root, story, state string, at time.Time) error {
	rec, ok := ReadRecord(root, story)
	if !ok || rec.PRState == state {
		return nil
	}
	rec.PRState, rec.PRStateAt = state, at.UTC()
	return WriteRecord(root, rec)
}

// ReadRecord returns a story's record of its last real run; ok is false
// when there is none (or it does not parse: a record is a cache of what
// the branch also says). A record of a dry run is never returned: releases
// before dry runs lived apart wrote theirs here, with dryRun set.
func ReadRecord(root, story string) (r Record, ok bool) { return OpenRecords(root).Read(story) }

// ReadDryRecord returns the record of the story's last dry run.
func ReadDryRecord(root, story string) (r Record, ok bool) { return OpenRecords(root).ReadDry(story) }

// Records reads the run records of one root, their folder found and
// checked once: a reader of every story (an epic's state) pays for that
// once, not twice per story.
type Records struct {
	dir   string
	err   error
	cache *RunCache // nil: every read decodes
	// names are the folder's files as Listed found them; nil: not listed,
	// every read opens its file.
	names map[string]bool
}

// OpenRecords finds and checks the root's record folder (trustedRecordDir).
func OpenRecords(root string) Records { return (*RunCache)(nil).OpenRecords(root) }

// OpenRecords is OpenRecords whose reads decode a record again only when
// its file changed.
func (c *RunCache) OpenRecords(root string) Records {
	dir, err := trustedRecordDir(root)
	return Records{dir: dir, err: err, cache: c}
}

// Listed is rr with its folder listed now: a reader of many stories'
// records (an epic's derivation) then opens only those that exist, not two
// absent files for each story that never ran. A record written after the
// listing is the next listing's.
func (rr Records) Listed() Records {
	if rr.err != nil {
		return rr
	}
	ents, err := os.ReadDir(rr.dir)
	switch {
	case err == nil:
		rr.names = make(map[string]bool, len(ents))
		for _, e := range ents {
			rr.names[e.Name()] = true
		}
	case errors.Is(err, fs.ErrNotExist):
		rr.names = map[string]bool{} // no run recorded yet
	}
	return rr
}

// Read is ReadRecord.
func (rr Records) Read(story string) (Record, bool) {
	r, ok := rr.read(story, false)
	if ok && r.DryRun {
		return Record{}, false
	}
	return r, ok
}

// ReadDry is ReadDryRecord.
func (rr Records) ReadDry(story string) (Record, bool) {
	r, ok := rr.read(story, true)
	if ok && !r.DryRun {
		return Record{}, false
	}
	return r, ok
}

// recordRead is a record file's decoding: ok false when it is none.
type recordRead struct {
	r  Record
	ok bool
}

func (rr Records) read(story string, dry bool) (Record, bool) {
	if !store.ValidCanonical(story) || rr.err != nil {
		return Record{}, false
	}
	path := recordFile(rr.dir, story, dry)
	if rr.names != nil && !rr.names[filepath.Base(path)] {
		return Record{}, false
	}
	decode := func() recordRead {
		var r Record
		data, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(data, &r) != nil || r.Story != story {
			return recordRead{}
		}
		return recordRead{r, true}
	}
	if rr.cache != nil {
		if fi, err := os.Stat(path); err == nil { // Stat: as ReadFile opens it
			d := through(rr.cache, &rr.cache.records, path, fi, decode)
			return d.r, d.ok
		}
	}
	d := decode()
	return d.r, d.ok
}

// UpdateReview changes the review part of the story's last real run's
// record (a watcher's read, a round's end); without a record there is no
// run, and nothing is written.
func UpdateReview(root, story string, change func(*ReviewRecord)) error {
	rec, ok := ReadRecord(root, story)
	if !ok {
		return nil
	}
	if rec.Review == nil {
		rec.Review = &ReviewRecord{}
	}
	change(rec.Review)
	return WriteRecord(root, rec)
}

// RecordsStamp is the record folder as one stat saw it. Every record
// written or removed changes it — WriteRecord replaces a file by a rename
// in the folder, reset and clean unlink — so a long-lived reader that saw
// the same stamp before reads the same records (stats.Memo).
type RecordsStamp struct{ fi os.FileInfo }

// Same reports whether two stamps are of the same folder, unchanged.
func (s RecordsStamp) Same(o RecordsStamp) bool {
	return s.fi != nil && o.fi != nil && os.SameFile(s.fi, o.fi) &&
		s.fi.ModTime().Equal(o.fi.ModTime()) && s.fi.Size() == o.fi.Size()
}

// Stamp is the record folder's stamp at now; false when there is none to
// trust: no folder, or one changed so lately that a record written after
// this stat could keep its modification time (filesafe.Settled).
func (rr Records) Stamp(now time.Time) (RecordsStamp, bool) {
	if rr.err != nil {
		return RecordsStamp{}, false
	}
	fi, err := os.Stat(rr.dir)
	if err != nil || !fi.IsDir() || !filesafe.Settled(now, fi.ModTime()) {
		return RecordsStamp{}, false
	}
	return RecordsStamp{fi}, true
}
