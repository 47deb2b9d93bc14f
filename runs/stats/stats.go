// Package stats owns the epic's outcome, counted (docs/landing.md#the-epics-outcome-counted):
// stories landed, cost per landed story, first-pass rate, review rounds,
// time from first start to land and the checks that failed most, for a
// story, an epic or the whole workspace — computed from the stories' run
// records alone (runs.Records, the record reader: each run's line, the review loop's
// rounds, the PR state saga-lsp recorded), never from a transcript, a log
// or GitHub. `saga-lsp stats` and the dashboard's epic page both render
// its Figures (text.go: the lines both show); a long-lived reader keeps
// them while no record changed (Memo). Of ours it imports
// internal/termtext, runs and store.
package stats

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// Scopes of Figures.
const (
	ScopeWorkspace = "workspace"
	ScopeEpic      = "epic"
	ScopeStory     = "story"
)

// Figures are the counted outcome of a scope's stories. Money is in USD,
// rounded to the cent; a ratio with no denominator is null.
type Figures struct {
	Scope string `json:"scope"`
	ID    string `json:"id,omitempty"`
	// Stories in the scope; Run of them have a recorded run; Landed have
	// their PR merged as last recorded (prState MERGED).
	Stories int `json:"stories"`
	Run     int `json:"run"`
	Landed  int `json:"landed"`
	// Runs are every recorded run (each record's history), of which
	// FirstRuns are stories' first, ReviewRuns review rounds and Retries
	// the rest.
	Runs       int `json:"runs"`
	FirstRuns  int `json:"firstRuns"`
	Retries    int `json:"retries"`
	ReviewRuns int `json:"reviewRuns"`
	// Spent is every story's spend (runs.Spent of its record).
	Spent float64 `json:"spent"`
	// LandedCost is the landed stories' spend, CostPerLanded it over
	// Landed; CostUnknown counts the landed stories' headless runs that
	// reported no cost (LandedCost is then a lower bound).
	LandedCost    float64  `json:"landedCost"`
	CostPerLanded *float64 `json:"costPerLanded"`
	CostUnknown   int      `json:"costUnknown"`
	// FirstPass of FirstPassOf stories (those with a recorded first run)
	// had their first run complete without a refused check.
	FirstPass     int      `json:"firstPass"`
	FirstPassOf   int      `json:"firstPassOf"`
	FirstPassRate *float64 `json:"firstPassRate"`
	// ReviewRounds over every story (the review loop's count);
	// RoundsPerLanded is the landed stories' rounds over Landed.
	ReviewRounds    int      `json:"reviewRounds"`
	RoundsPerLanded *float64 `json:"roundsPerLanded"`
	// ToLand is the time from a landed story's first start to its land,
	// over the ToLandOf landed stories whose both are recorded (seconds).
	ToLandOf      int      `json:"toLandOf"`
	ToLandMedian  *float64 `json:"toLandMedianSeconds"`
	ToLandLongest *float64 `json:"toLandLongestSeconds"`
	// FailedChecks are the checks that refused a completion or failed at
	// a run's end, by command, most first.
	FailedChecks []CheckCount `json:"failedChecks"`
	// StoryFigures are the scope's stories one by one, in scope order.
	StoryFigures []Story `json:"perStory"`
	// Epics are every epic's figures, for the workspace scope.
	Epics []Figures `json:"epics,omitempty"`
}

// CheckCount is how often a check's command refused, and in how many
// stories.
type CheckCount struct {
	Command string `json:"command"`
	Count   int    `json:"count"`
	Stories int    `json:"stories"`
}

// Story is one story's part of the figures.
type Story struct {
	ID     string `json:"id"`
	Record bool   `json:"record"` // it has a run record
	// History: the record holds its runs' lines (not one of saga-lsp's
	// before them, whose runs are counted by its spend alone).
	History      bool       `json:"history"`
	Runs         int        `json:"runs"`
	Retries      int        `json:"retries"`
	ReviewRuns   int        `json:"reviewRuns"`
	ReviewRounds int        `json:"reviewRounds"`
	Spent        float64    `json:"spent"`
	CostUnknown  int        `json:"costUnknown"`
	FirstPass    *bool      `json:"firstPass"` // null: no recorded first run
	FirstStart   *time.Time `json:"firstStart"`
	Landed       bool       `json:"landed"`
	LandedAt     *time.Time `json:"landedAt"`
	ToLand       *float64   `json:"toLandSeconds"`
	// Refused: its checks that refused, by command.
	Refused map[string]int `json:"refused,omitempty"`
}

// Reader reads the records of one repository's stories, each once.
type Reader struct {
	Root string
	// Runs, when set, decodes a record again only when it changed (a
	// long-lived reader: the dashboard's pages).
	Runs *runs.RunCache
	// Memo, when set, keeps each scope's figures while the record folder
	// is unchanged (a long-lived reader: the dashboard's epic page, fetched
	// at every change of a run).
	Memo  *Memo
	recs  *runs.Records
	cache map[string]Story
}

// records opens the reader's records once.
func (r *Reader) records() *runs.Records {
	if r.recs == nil {
		recs := r.Runs.OpenRecords(r.Root)
		r.recs = &recs
	}
	return r.recs
}

// Memo is a long-lived reader's last figures of each scope, with the
// record folder's stamp they were counted at (runs.RecordsStamp): counted
// again only when a record was written or removed since, or the scope's
// stories changed. An epic's page during a run asked for its figures at
// every change the run made, each a stat of every story's record — a
// ninth of the dashboard's CPU (docs/architecture.md#an-epic-of-200-stories).
// What it trusts: docs/landing.md#the-epics-outcome-counted.
type Memo struct {
	mu   sync.Mutex
	last map[string]memoEntry // by scope and id
}

type memoEntry struct {
	stamp   runs.RecordsStamp
	stories []string
	f       Figures
}

func (m *Memo) count(r *Reader, scope, id string, stories []string) Figures {
	stamp, ok := r.records().Stamp(time.Now())
	key := scope + "\x00" + id
	m.mu.Lock()
	e, hit := m.last[key]
	m.mu.Unlock()
	if ok && hit && e.stamp.Same(stamp) && slices.Equal(e.stories, stories) {
		return e.f
	}
	f := count(r, scope, id, stories)
	if ok {
		m.mu.Lock()
		if m.last == nil {
			m.last = map[string]memoEntry{}
		}
		m.last[key] = memoEntry{stamp, slices.Clone(stories), f}
		m.mu.Unlock()
	}
	return f
}

// story is the story's part, read from its record.
func (r *Reader) story(id string) Story {
	if s, ok := r.cache[id]; ok {
		return s
	}
	if r.cache == nil {
		r.cache = map[string]Story{}
	}
	s := Story{ID: id}
	rec, ok := r.records().Read(id)
	if ok {
		s = FromRecord(rec)
	}
	r.cache[id] = s
	return s
}

// FromRecord is a story's part of the figures from its run record.
func FromRecord(rec runs.Record) Story {
	s := Story{ID: rec.Story, Record: true, History: len(rec.History) > 0, Spent: cents(runs.Spent(rec, true, nil))}
	if rec.Review != nil {
		s.ReviewRounds = rec.Review.Rounds
	}
	s.Runs = len(rec.History) + rec.HistoryDropped
	for i, l := range rec.History {
		switch {
		case l.Review:
			s.ReviewRuns++
		case i > 0:
			s.Retries++
		}
		s.CostUnknown += l.CostUnknown
		for c, n := range l.Refused {
			if n > 0 {
				if s.Refused == nil {
					s.Refused = map[string]int{}
				}
				s.Refused[c] += n
			}
		}
	}
	// Dropped lines were neither the first run nor, as far as is known,
	// review rounds.
	s.Retries += rec.HistoryDropped
	if s.History {
		first := rec.History[0]
		pass := first.Status == runs.StatusCompleted && len(first.Refused) == 0
		s.FirstPass = &pass
		start := first.Started.UTC()
		s.FirstStart = &start
	}
	if rec.PRState == runs.PRMerged {
		s.Landed = true
		if !rec.PRStateAt.IsZero() {
			at := rec.PRStateAt.UTC()
			s.LandedAt = &at
			if s.FirstStart != nil && !at.Before(*s.FirstStart) {
				d := at.Sub(*s.FirstStart).Seconds()
				s.ToLand = &d
			}
		}
	}
	return s
}

// Of are the figures of a scope: the story or epic id, of kind
// (store.NameStory, store.NameEpic: the caller resolved the name), or the
// whole workspace for id "" — every story, with every epic's figures
// beside.
func Of(r *Reader, ws *store.Workspace, id string, kind store.NameKind) Figures {
	switch {
	case id == "":
		f := Count(r, ScopeWorkspace, "", ws.SortedStoryIDs())
		for _, e := range ws.SortedEpicIDs() {
			f.Epics = append(f.Epics, Count(r, ScopeEpic, e, EpicStories(ws, e)))
		}
		return f
	case kind == store.NameEpic:
		return Count(r, ScopeEpic, id, EpicStories(ws, id))
	}
	return Count(r, ScopeStory, id, []string{id})
}

// EpicStories are an epic's children, each once, in its order.
func EpicStories(ws *store.Workspace, epic string) []string {
	e := ws.Epic(epic)
	if e == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range e.Children {
		if c.ID != "" && !seen[c.ID] {
			seen[c.ID] = true
			out = append(out, c.ID)
		}
	}
	return out
}

// Count adds up the figures of stories (docs/landing.md#the-epics-outcome-counted
// defines each).
func Count(r *Reader, scope, id string, stories []string) Figures {
	if r.Memo != nil {
		return r.Memo.count(r, scope, id, stories)
	}
	return count(r, scope, id, stories)
}

func count(r *Reader, scope, id string, stories []string) Figures {
	f := Figures{Scope: scope, ID: id, Stories: len(stories), FailedChecks: []CheckCount{}, StoryFigures: []Story{}}
	var toLand []float64
	landedRounds := 0
	checks := map[string]*CheckCount{}
	for _, sid := range stories {
		s := r.story(sid)
		f.StoryFigures = append(f.StoryFigures, s)
		if s.Record {
			f.Run++
		}
		f.Runs += s.Runs
		f.Retries += s.Retries
		f.ReviewRuns += s.ReviewRuns
		if s.History {
			f.FirstRuns++
		}
		f.Spent += s.Spent
		f.ReviewRounds += s.ReviewRounds
		if s.FirstPass != nil {
			f.FirstPassOf++
			if *s.FirstPass {
				f.FirstPass++
			}
		}
		if s.Landed {
			f.Landed++
			f.LandedCost += s.Spent
			f.CostUnknown += s.CostUnknown
			landedRounds += s.ReviewRounds
			if s.ToLand != nil {
				toLand = append(toLand, *s.ToLand)
			}
		}
		for c, n := range s.Refused {
			cc := checks[c]
			if cc == nil {
				cc = &CheckCount{Command: c}
				checks[c] = cc
			}
			cc.Count += n
			cc.Stories++
		}
	}
	f.Spent, f.LandedCost = cents(f.Spent), cents(f.LandedCost)
	if f.Landed > 0 {
		f.CostPerLanded = ptr(cents(f.LandedCost / float64(f.Landed)))
		f.RoundsPerLanded = ptr(float64(landedRounds) / float64(f.Landed))
	}
	if f.FirstPassOf > 0 {
		f.FirstPassRate = ptr(float64(f.FirstPass) / float64(f.FirstPassOf))
	}
	if f.ToLandOf = len(toLand); f.ToLandOf > 0 {
		slices.Sort(toLand)
		n := len(toLand)
		med := toLand[n/2]
		if n%2 == 0 {
			med = (toLand[n/2-1] + toLand[n/2]) / 2
		}
		f.ToLandMedian, f.ToLandLongest = ptr(med), ptr(toLand[n-1])
	}
	for _, cc := range checks {
		f.FailedChecks = append(f.FailedChecks, *cc)
	}
	slices.SortFunc(f.FailedChecks, func(a, b CheckCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Command, b.Command))
	})
	return f
}

func ptr[T any](v T) *T { return &v }

// cents rounds USD to the cent: the sums of reported costs carry binary
// fractions no one asked for.
func cents(usd float64) float64 { return math.Round(usd*100) / 100 }
