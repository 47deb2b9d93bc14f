// Package workload owns the benchmark workspaces of the performance budgets
// (docs/architecture.md#budgets): a deterministic generator of realistic .saga/ trees, with
// a few deliberate findings so the checker has real work, and Ensure, which
// keeps workload W on disk between benchmark runs; and the git repository
// of 100,000 files the worker is measured in (EnsureRepo, repo.go).
package workload

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/store"
)

// Version names the generator's output; bump it whenever Generate changes
// what it writes, so Ensure regenerates stale copies of W.
const Version = 1

// Workload W of docs/architecture.md#budgets.
const (
	WStories       = 2000
	WTasksPerStory = 10
	WEpics         = 100
	WSeed          = 1
)

// markerName is the file Ensure leaves beside .saga/ once a generation is
// complete; its content identifies the generator version and parameters.
const markerName = ".saga-lsp-workload"

// findingShare is the fraction of files given a deliberate finding.
const findingShare = 0.02

// Generate writes a workspace of stories (spread evenly over epics; none
// belongs to an epic when epics is 0), each with tasksPerStory task files,
// under dir/.saga. The same arguments always give the same bytes.
func Generate(dir string, stories, tasksPerStory, epics int, seed int64) error {
	files, _, err := build(stories, tasksPerStory, epics, seed)
	if err != nil {
		return err
	}
	return write(dir, files)
}

// Ensure makes dir hold workload W and returns dir. A complete copy made by
// this generator version is reused; anything else of ours is regenerated. A
// non-empty dir that is not ours is refused rather than deleted.
func Ensure(dir string) (string, error) {
	return ensure(dir, WStories, WTasksPerStory, WEpics, WSeed)
}

// EnsureScaled is Ensure for W scaled by factor: factor times the stories
// and epics, as many tasks per story (4W: 88,000 files).
func EnsureScaled(dir string, factor int) (string, error) {
	return ensure(dir, WStories*factor, WTasksPerStory, WEpics*factor, WSeed)
}

func ensure(dir string, stories, tasksPerStory, epics int, seed int64) (string, error) {
	marker := fmt.Sprintf("saga-lsp workload v%d: %d stories × %d tasks + %d epics, seed %d\n",
		Version, stories, tasksPerStory, epics, seed)
	return ensureWith(dir, marker, func(dir string) error { return Generate(dir, stories, tasksPerStory, epics, seed) })
}

// ensureWith makes dir hold what generate writes, identified by marker.
func ensureWith(dir, marker string, generate func(dir string) error) (string, error) {
	got, err := os.ReadFile(filepath.Join(dir, markerName))
	if err == nil && string(got) == marker {
		return dir, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("workload: read marker: %w", err)
	}
	if err != nil { // no marker: only an absent or empty dir may be filled
		des, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("workload: %w", err)
		}
		if len(des) > 0 {
			return "", fmt.Errorf("workload: %s is not empty and has no %s marker; refusing to replace it", dir, markerName)
		}
	}
	// Generate beside dir and swap it in, so an interrupted run never leaves
	// a partial tree that looks complete.
	partial := dir + ".partial"
	if err := os.RemoveAll(partial); err != nil {
		return "", fmt.Errorf("workload: %w", err)
	}
	if err := generate(partial); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(partial, markerName), []byte(marker), 0o644); err != nil {
		return "", fmt.Errorf("workload: %w", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("workload: remove stale %s: %w", dir, err)
	}
	if err := os.Rename(partial, dir); err != nil {
		return "", fmt.Errorf("workload: %w", err)
	}
	return dir, nil
}

// file is one generated file, by slash-separated path relative to the root.
type file struct {
	rel  string
	data []byte
}

// finding is a deliberate problem the checker must report.
type finding struct {
	rel  string
	code store.Code
}

// storyDoc and epicDoc are story.json and epic.json in the seeds' dialect,
// which allows a status field: W carries statuses as long-lived workspaces
// do (store.StoryDoc and store.EpicDoc, what saga-lsp writes, have none).
type storyDoc struct {
	store.StoryDoc
	Status string `json:"status,omitempty"`
}

type epicDoc struct {
	ID          string           `json:"id"`
	Title       string           `json:"title"`
	Description string           `json:"description"`
	Status      string           `json:"status,omitempty"`
	Children    []store.ChildDoc `json:"children"`
}

// task and storyPlan are the generated model before it is written out.
type task struct {
	doc    store.TaskDoc
	defect store.Code // deliberate finding, if any
}

type storyPlan struct {
	doc   storyDoc
	tasks []*task
}

type epicPlan struct {
	doc     epicDoc
	stories []*storyPlan // in children order
}

// build generates the whole workspace in memory: the files in write order
// and the deliberate findings among them.
func build(stories, tasksPerStory, epics int, seed int64) ([]file, []finding, error) {
	if stories < 0 || tasksPerStory < 0 || epics < 0 || (epics > 0 && stories < epics) {
		return nil, nil, fmt.Errorf("workload: want stories ≥ epics ≥ 0 and tasks ≥ 0, got %d stories × %d tasks + %d epics",
			stories, tasksPerStory, epics)
	}
	w := &writer{rng: rand.New(rand.NewPCG(uint64(seed), 0x5a6a)), v: newVocabulary()}
	var all []*storyPlan
	var eps []*epicPlan
	epicIDs := w.uniqueNames(epics, w.v.epicAreas, w.v.epicTopics, map[string]bool{})
	usedStandalone := map[string]bool{}
	for e := range max(epics, 1) {
		lo, hi := e*stories/max(epics, 1), (e+1)*stories/max(epics, 1)
		var ep *epicPlan
		prefix := ""
		if epics > 0 {
			ep = w.epic(epicIDs[e])
			eps = append(eps, ep)
			prefix = ep.doc.ID + "--"
		}
		used := usedStandalone // standalone names share one namespace; epic children one per epic
		if ep != nil {
			used = map[string]bool{}
		}
		names := w.uniqueStoryNames(hi-lo, used)
		done := map[string]bool{} // stories whose tasks are all completed
		for i, name := range names {
			id := prefix + name
			var blockers []string
			if ep != nil {
				blockers = w.blockers(i, func(j int) string { return prefix + names[j] })
				ep.doc.Children = append(ep.doc.Children, store.ChildDoc{ID: id, BlockedBy: blockers})
			}
			startable := true
			for _, b := range blockers {
				startable = startable && done[b]
			}
			s := w.story(id, tasksPerStory, startable)
			done[id] = s.doc.Status == store.StatusCompleted
			if ep != nil {
				s.doc.Epic = ep.doc.ID
				ep.stories = append(ep.stories, s)
			}
			all = append(all, s)
		}
	}
	injectFindings(all)
	for _, s := range all {
		s.doc.Status = store.RolledUp(s.tasks, func(t *task) string { return t.doc.Status })
	}
	for _, ep := range eps {
		ep.doc.Status = store.RolledUp(ep.stories, func(s *storyPlan) string { return s.doc.Status })
		if ep.doc.Status == store.StatusPending && w.rng.IntN(2) == 0 {
			ep.doc.Status = "" // optional: many pending epics never set it
		}
	}

	var files []file
	var findings []finding
	add := func(rel string, doc any) error {
		data, err := store.MarshalIndent(doc)
		if err != nil {
			return fmt.Errorf("workload: %s: %w", rel, err)
		}
		files = append(files, file{rel, data})
		return nil
	}
	for _, ep := range eps {
		if err := add(store.EpicFileRel(ep.doc.ID), ep.doc); err != nil {
			return nil, nil, err
		}
	}
	for _, s := range all {
		if err := add(store.StoryFileRel(s.doc.ID), s.doc); err != nil {
			return nil, nil, err
		}
		for _, t := range s.tasks {
			rel := store.TaskFileRel(s.doc.ID, t.doc.ID)
			if err := add(rel, t.doc); err != nil {
				return nil, nil, err
			}
			if t.defect != "" {
				f := &files[len(files)-1]
				f.data = corrupt(f.data, t.defect)
				findings = append(findings, finding{rel, t.defect})
			}
		}
	}
	return files, findings, nil
}

// uniqueNames draws n distinct "<a>-<b>" ids that used does not hold yet,
// numbering them once the combinations run out.
func (w *writer) uniqueNames(n int, as, bs []string, used map[string]bool) []string {
	out := make([]string, 0, n)
	combos := w.rng.Perm(len(as) * len(bs))
	for k := 1; len(out) < n; k++ {
		for _, c := range combos {
			name := as[c/len(bs)] + "-" + bs[c%len(bs)]
			if k > 1 {
				name += fmt.Sprintf("-%d", k)
			}
			if len(out) == n {
				break
			}
			if !used[name] {
				used[name] = true
				out = append(out, name)
			}
		}
	}
	return out
}

func (w *writer) uniqueStoryNames(n int, used map[string]bool) []string {
	return w.uniqueNames(n, idsOf(w.v.storyVerbs), idsOf(w.v.storyThings), used)
}

// idsOf is the id form of each of a vocabulary's words.
func idsOf[W interface{ id() string }](words []W) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w.id()
	}
	return out
}

// blockers picks the earlier siblings item i waits for: usually the one just
// before (chains), sometimes one further back (fan-in), so the graph is a DAG
// with several waves.
func (w *writer) blockers(i int, name func(j int) string) []string {
	out := []string{}
	if i > 0 && w.rng.Float64() < 0.75 {
		out = append(out, name(i-1))
	}
	if i > 1 && w.rng.Float64() < 0.35 {
		out = append(out, name(w.rng.IntN(i-1)))
	}
	return out
}

func (w *writer) epic(id string) *epicPlan {
	area, topic, _ := strings.Cut(id, "-")
	title := titleCase(area) + " " + strings.ToUpper(topic[:1]) + topic[1:]
	return &epicPlan{doc: epicDoc{
		ID: id, Title: title,
		Description: w.paragraph(title, 5, 7),
		Children:    []store.ChildDoc{},
	}}
}

// story generates a story and its tasks. startable says whether the stories
// it is blocked by are completed; only then may its tasks have started.
func (w *writer) story(id string, tasksPerStory int, startable bool) *storyPlan {
	_, name, _ := strings.Cut(id, "--")
	if name == "" {
		name = id
	}
	v, th := w.storyParts(name)
	title := v.imperative + " " + th.phrase
	s := &storyPlan{doc: storyDoc{StoryDoc: store.StoryDoc{
		ID: id, Title: title,
		Description: w.paragraph(th.phrase, 3, 5),
		Guidance:    w.sentences(w.v.guidance, 1+w.rng.IntN(2), th.phrase),
		DoneWhen:    w.sentences(w.v.doneWhen, 1+w.rng.IntN(2), th.phrase),
	}}}
	if w.rng.Float64() < 0.6 {
		s.doc.Avoid = w.sentences(w.v.avoid, 1, th.phrase)
	}
	progress := "pending"
	if r := w.rng.Float64(); startable && r < 0.35 {
		progress = "done"
	} else if startable && r < 0.6 {
		progress = "started"
	}
	ids := w.uniqueTaskIDs(tasksPerStory)
	status := map[string]string{}
	for i, tid := range ids {
		t := w.task(tid, w.blockers(i, func(j int) string { return ids[j] }))
		switch progress {
		case "done":
			t.doc.Status = store.StatusCompleted
		case "started":
			ready := true
			for _, b := range t.doc.BlockedBy {
				ready = ready && status[b] == store.StatusCompleted
			}
			if r := w.rng.Float64(); ready && r < 0.55 {
				t.doc.Status = store.StatusCompleted
			} else if ready && r < 0.75 {
				t.doc.Status = store.StatusInProgress
			}
		}
		status[tid] = t.doc.Status
		s.tasks = append(s.tasks, t)
	}
	return s
}

// storyParts recovers the verb and object a story name was made of.
func (w *writer) storyParts(name string) (verb, thing) {
	for _, v := range w.v.storyVerbs {
		if rest, ok := strings.CutPrefix(name, slug(v.imperative)+"-"); ok {
			for _, th := range w.v.storyThings {
				if strings.HasPrefix(rest, th.slug) {
					return v, th
				}
			}
		}
	}
	return pick(w, w.v.storyVerbs), pick(w, w.v.storyThings)
}

// uniqueTaskIDs draws n distinct "<verb>-<object>" task ids.
func (w *writer) uniqueTaskIDs(n int) []string {
	return w.uniqueNames(n, idsOf(w.v.taskVerbs), idsOf(w.v.taskThings), map[string]bool{})
}

// task fills a task's texts from the verb and object its id was made of.
func (w *writer) task(id string, blockedBy []string) *task {
	var v verb
	var th thing
	for _, cand := range w.v.taskVerbs {
		if rest, ok := strings.CutPrefix(id, slug(cand.imperative)+"-"); ok {
			for _, t := range w.v.taskThings {
				if rest == t.slug || strings.HasPrefix(rest, t.slug+"-") {
					v, th = cand, t
				}
			}
		}
	}
	where := pick(w, w.v.places)
	t := &task{doc: store.TaskDoc{
		ID: id, Subject: v.imperative + " " + th.phrase + " in " + where,
		Description: w.paragraph(th.phrase, 2, 4),
		ActiveForm:  v.continuous + " " + th.phrase,
		Status:      store.StatusPending,
		BlockedBy:   blockedBy,
	}}
	if r := w.rng.Float64(); r < 0.4 {
		t.doc.Priority = []string{"critical", "high", "high", "medium", "medium", "medium", "low"}[w.rng.IntN(7)]
	}
	if w.rng.Float64() < 0.8 {
		t.doc.Guidance = w.sentences(w.v.guidance, 1+w.rng.IntN(2), th.phrase)
	}
	if w.rng.Float64() < 0.85 {
		t.doc.DoneWhen = w.sentences(w.v.doneWhen, 1+w.rng.IntN(2), th.phrase)
	}
	return t
}

// injectFindings marks about findingShare of all files (at least one of each
// kind when there are enough tasks) with a deliberate problem, spread evenly
// over the tasks.
func injectFindings(stories []*storyPlan) {
	type at struct {
		s *storyPlan
		t *task
	}
	var tasks []at
	for _, s := range stories {
		for _, t := range s.tasks {
			tasks = append(tasks, at{s, t})
		}
	}
	nFiles := len(stories) + len(tasks)
	kinds := []store.Code{store.CodeJSONSyntax, store.CodeUnknownProperty, store.CodeUnknownDependency, store.CodeStatusInconsistent}
	n := min(len(tasks), max(len(kinds), int(float64(nFiles)*findingShare+0.5)))
	for i := range n {
		kind := kinds[i%len(kinds)]
		start := i*len(tasks)/n + len(tasks)/(2*n)
		// Search onwards for a task the kind applies to: a status
		// inconsistency needs an unfinished blocker.
		for k := range len(tasks) {
			c := tasks[(start+k)%len(tasks)]
			if c.t.defect != "" {
				continue
			}
			if kind == store.CodeStatusInconsistent && !hasOpenBlocker(c.s, c.t) {
				continue
			}
			c.t.defect = kind
			applyModelDefect(c.s, c.t)
			break
		}
	}
}

func hasOpenBlocker(s *storyPlan, t *task) bool {
	if t.doc.Status == store.StatusCompleted {
		return false
	}
	for _, b := range t.doc.BlockedBy {
		for _, o := range s.tasks {
			if o.doc.ID == b && o.doc.Status != store.StatusCompleted {
				return true
			}
		}
	}
	return false
}

// applyModelDefect makes the defects that live in the model; the textual
// ones are made by corrupt once the file is encoded.
func applyModelDefect(s *storyPlan, t *task) {
	switch t.defect {
	case store.CodeStatusInconsistent:
		t.doc.Status = store.StatusCompleted // while a blocker is not
	case store.CodeUnknownDependency:
		// A typo of a sibling's id, as when a task is renamed by hand.
		target := t.doc.ID
		if len(t.doc.BlockedBy) > 0 {
			target = t.doc.BlockedBy[0]
		} else if len(s.tasks) > 1 {
			target = s.tasks[(slices.Index(s.tasks, t)+1)%len(s.tasks)].doc.ID
		}
		typo := typoOf(target, s)
		if len(t.doc.BlockedBy) > 0 {
			t.doc.BlockedBy[0] = typo
		} else {
			t.doc.BlockedBy = []string{typo}
		}
	}
}

// typoOf returns a valid id near id that no task of s has.
func typoOf(id string, s *storyPlan) string {
	taken := func(c string) bool {
		for _, o := range s.tasks {
			if o.doc.ID == c {
				return true
			}
		}
		return false
	}
	for _, c := range []string{id[:len(id)-1], id + "s", id + "-old"} {
		if store.ValidID(c) && !taken(c) {
			return c
		}
	}
	return "missing-task"
}

// corrupt applies a textual defect to an encoded task file.
func corrupt(data []byte, code store.Code) []byte {
	switch code {
	case store.CodeJSONSyntax:
		// A missing comma after the subject, as a hand edit leaves it; the
		// parser recovers, so only the syntax error is reported.
		return bytes.Replace(data, []byte("\",\n  \"description\""), []byte("\"\n  \"description\""), 1)
	case store.CodeUnknownProperty:
		// A misspelt optional property.
		i := bytes.LastIndex(data, []byte("\n}"))
		return slices.Concat(data[:i], []byte(",\n  \"prority\": \"high\""), data[i:])
	}
	return data
}

// slug lowercases a phrase into id form ("Set up" → "set-up").
func slug(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "-") }

func titleCase(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// write stores the files under dir with plain os.WriteFile: the tree is
// scratch data, so atomic writes would only slow generation down.
func write(dir string, files []file) error {
	made := map[string]bool{}
	for _, f := range files {
		abs := filepath.Join(dir, filepath.FromSlash(f.rel))
		if d := filepath.Dir(abs); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("workload: %w", err)
			}
			made[d] = true
		}
		if err := os.WriteFile(abs, f.data, 0o644); err != nil {
			return fmt.Errorf("workload: %w", err)
		}
	}
	return nil
}
