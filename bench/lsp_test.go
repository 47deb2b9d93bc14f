//go:build linux

package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
)

// The language-server budgets of docs/architecture.md#budgets, measured against the built
// binary (bin/saga-lsp) run as an editor runs it: a process spoken to over
// stdin/stdout.
//
//   - BenchmarkLSPInit: initialize → every file with findings published,
//     paired with the floor program as BenchmarkCheckPaired pairs the check.
//   - BenchmarkLSPKeystroke: one keystroke in an open task file → its
//     diagnostics and every affected file's published, p50/p95/max, and the
//     server's peak resident memory.

// lspKeystrokesPerOp is how many keystrokes one op of BenchmarkLSPKeystroke
// types; the percentiles cover every op's keystrokes.
const lspKeystrokesPerOp = 100

// lspTimeout bounds every wait on the server, so a hung server fails the
// benchmark instead of hanging it.
const lspTimeout = 60 * time.Second

// sagaCapabilities is what the benchmark client declares: the parts of VS
// Code's capabilities that change what saga-lsp does (the client watches
// files, so the server registers watchers instead of using fsnotify; it
// shows progress; it takes versioned diagnostics).
var sagaCapabilities = json.RawMessage(`{
  "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true},
                "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create", "rename", "delete"]}},
  "window": {"workDoneProgress": true},
  "textDocument": {"synchronization": {"didSave": true}, "publishDiagnostics": {"versionSupport": true}}
}`)

// expectation is what `saga-lsp check` reports on W: the files with
// findings, which the server must publish after loading.
type expectation struct {
	files map[string]bool // absolute paths
	rels  map[string]bool // the same, relative to W with slashes
}

var (
	expectMu    sync.Mutex
	expectCache = map[string]*expectation{}
)

// expectedFindings runs `saga-lsp check` on w once (untimed) and returns the
// files it reports.
func expectedFindings(b *testing.B, bin, w string) *expectation {
	b.Helper()
	expectMu.Lock()
	defer expectMu.Unlock()
	if e := expectCache[w]; e != nil {
		return e
	}
	cmd := exec.Command(bin, "check", "--root", w, "--format", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	wantFindings(b, cmd.Run(), &stderr)
	var out struct {
		Diagnostics []struct {
			File string `json:"file"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		b.Fatalf("decode saga-lsp check output: %v", err)
	}
	e := &expectation{files: map[string]bool{}, rels: map[string]bool{}}
	for _, d := range out.Diagnostics {
		e.rels[d.File] = true
		e.files[filepath.Join(w, filepath.FromSlash(d.File))] = true
	}
	if len(e.files) == 0 {
		b.Fatal("saga-lsp check found nothing on W, which has deliberate findings")
	}
	expectCache[w] = e
	return e
}

// startSaga starts `saga-lsp serve`; it answers the server's requests
// (watcher registration, progress tokens) with null, as an editor would.
func startSaga(b *testing.B, bin string) *lspProc {
	b.Helper()
	c, err := startLSP(bin, []string{"serve"}, nil)
	if err != nil {
		b.Fatalf("start %s serve: %v", bin, err)
	}
	return c
}

// initTimes are the moments of one server start, from the process start.
type initTimes struct {
	init   time.Duration // the last expected publication arrived
	loaded time.Duration // the "saga-lsp: loaded" log message arrived
	extra  int           // files published with findings check did not report
}

// sagaInitialize sends initialize (then initialized) and waits until every
// file of want has been published with findings and the server has logged
// that it loaded. Times count from t0.
func sagaInitialize(c *lspProc, w string, want *expectation, t0 time.Time) (initTimes, error) {
	var res initTimes
	params := map[string]any{
		"processId":        os.Getpid(),
		"clientInfo":       map[string]string{"name": "saga-lsp bench"},
		"rootUri":          lspclient.FileURI(w),
		"workspaceFolders": []map[string]string{{"uri": lspclient.FileURI(w), "name": filepath.Base(w)}},
		"capabilities":     sagaCapabilities,
	}
	if _, err := c.Call("initialize", params, lspTimeout); err != nil {
		return res, err
	}
	if err := c.Notify("initialized", struct{}{}); err != nil {
		return res, err
	}
	missing := len(want.files)
	seen := map[string]bool{}
	var loaded bool
	deadline := t0.Add(lspTimeout)
	for missing > 0 || !loaded {
		m, err := c.next(deadline)
		if err != nil {
			return res, fmt.Errorf("after initialize, %d of %d files with findings published, loaded=%v: %w",
				len(want.files)-missing, len(want.files), loaded, err)
		}
		switch m.Method {
		case "window/logMessage":
			if bytes.Contains(m.Params, []byte("saga-lsp: loaded")) {
				loaded = true
				res.loaded = m.At.Sub(t0)
			}
		case "textDocument/publishDiagnostics":
			var p publication
			if err := json.Unmarshal(m.Params, &p); err != nil {
				return res, fmt.Errorf("decode publishDiagnostics: %w", err)
			}
			path := lspclient.URIPath(p.URI)
			switch {
			case !want.files[path]:
				if len(p.Diagnostics) > 0 {
					res.extra++
				}
			case len(p.Diagnostics) > 0 && !seen[path]:
				seen[path] = true
				missing--
				res.init = m.At.Sub(t0)
			}
		}
	}
	return res, nil
}

// BenchmarkLSPInit is the budget "initialize → all diagnostics published ≤
// 4 × F": per op, the floor program reads and decodes W, then one server
// starts on W and the op waits until every file `saga-lsp check` reports
// has been published. The server's time counts from its process start (the
// floor's includes its own), with initialize sent at once. It reports the
// median ratio, as BenchmarkCheckPaired does, and when the "loaded" log
// message came.
func BenchmarkLSPInit(b *testing.B) {
	bin := builtBinary(b)
	floor := testkit.Build(b, "./bench/floor")
	w := workloadW(b)
	want := expectedFindings(b, bin, w)
	var floorS, initS, loadedS, ratios, rss []float64
	extra := 0
	for b.Loop() {
		start := time.Now()
		if out, err := exec.Command(floor, w).CombinedOutput(); err != nil {
			b.Fatalf("floor: %v\n%s", err, out)
		}
		f := time.Since(start).Seconds()

		t0 := time.Now()
		c := startSaga(b, bin)
		times, err := sagaInitialize(c, w, want, t0)
		if err != nil {
			c.stop()
			b.Fatal(err)
		}
		rss = append(rss, c.peakRSSMB())
		c.stop()
		i := times.init.Seconds()
		floorS, initS, ratios = append(floorS, f), append(initS, i), append(ratios, i/f)
		loadedS = append(loadedS, times.loaded.Seconds())
		extra = times.extra
	}
	if extra > 0 {
		b.Logf("the server published findings for %d files `saga-lsp check` does not report", extra)
	}
	b.ReportMetric(median(floorS), "floor-s")
	b.ReportMetric(median(initS), "init-s")
	b.ReportMetric(median(loadedS), "loaded-s")
	b.ReportMetric(median(ratios), "init/floor")
	if m := slices.Max(rss); m > 0 {
		b.ReportMetric(m, "load-RSS-MB")
	}
}

// BenchmarkLSPKeystroke is the budget "one keystroke in a task file → its
// diagnostics (and affected files') published ≤ 10 ms p95". After one
// initialize on W it opens a task file T and types lspKeystrokesPerOp
// keystrokes per op (see keystrokeDoc): each is timed from writing its
// didChange to the arrival of T's publication for that version and, when
// the edit touches a sibling's findings, the sibling's republication. It
// also reports the server's peak resident memory (VmHWM) after loading and
// at the end (the budget is ≤ 200 MB).
func BenchmarkLSPKeystroke(b *testing.B) {
	bin := builtBinary(b)
	w := workloadW(b)
	want := expectedFindings(b, bin, w)
	task, partner := cycleTask(b, w, want)

	c := startSaga(b, bin)
	defer c.stop()
	if _, err := sagaInitialize(c, w, want, time.Now()); err != nil {
		b.Fatal(err)
	}
	loadRSS := c.peakRSSMB()
	doc := openTask(b, c, w, task, partner)

	var lat, cross []float64
	for b.Loop() {
		for range lspKeystrokesPerOp {
			d, toggled, err := sagaKeystroke(c, doc)
			if err != nil {
				b.Fatalf("keystroke %d in %s: %v", doc.n, task, err)
			}
			lat = append(lat, d.Seconds()*1e3)
			if toggled {
				cross = append(cross, d.Seconds()*1e3)
			}
		}
	}
	reportLatencies(b, lat, "")
	if len(cross) > 0 {
		// The keystrokes that make or break the cycle, alone: two files change.
		b.ReportMetric(percentile(cross, 95), "cycle-p95-ms")
	}
	if loadRSS > 0 {
		b.ReportMetric(loadRSS, "load-RSS-MB")
		b.ReportMetric(c.peakRSSMB(), "peak-RSS-MB")
	}
}

// openTask opens the task file (version 1) and waits for its first
// publication.
func openTask(b *testing.B, c *lspProc, w, rel, partner string) *keystrokeDoc {
	b.Helper()
	path := filepath.Join(w, filepath.FromSlash(rel))
	text, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	doc := newKeystrokeDoc(path, string(text), partner)
	c.drain()
	err = c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": lspclient.FileURI(path), "languageId": "json", "version": doc.version, "text": doc.text}})
	if err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(lspTimeout)
	for {
		m, err := c.next(deadline)
		if err != nil {
			b.Fatalf("no publication for %s after didOpen: %v", rel, err)
		}
		if m.Method != "textDocument/publishDiagnostics" {
			continue
		}
		var p publication
		if json.Unmarshal(m.Params, &p) == nil && lspclient.URIPath(p.URI) == path && p.Version != nil && *p.Version == doc.version {
			if len(p.Diagnostics) > 0 {
				b.Fatalf("%s was picked as clean but has diagnostics: %+v", rel, p.Diagnostics)
			}
			return doc
		}
	}
}

// sagaKeystroke types one keystroke and returns how long until every
// publication it must cause had arrived: T's for the new version (with the
// dependency-cycle finding exactly while the cycle is in), and the partner
// file's when the keystroke makes or breaks the cycle (a keystroke that
// leaves the partner's findings as they were does not republish it).
func sagaKeystroke(c *lspProc, doc *keystrokeDoc) (_ time.Duration, toggled bool, _ error) {
	ed, toggled := doc.next()
	wantTask, wantPartner := true, toggled
	params := map[string]any{
		"textDocument":   map[string]any{"uri": lspclient.FileURI(doc.path), "version": doc.version},
		"contentChanges": []any{ed},
	}
	t0 := time.Now()
	if err := c.Notify("textDocument/didChange", params); err != nil {
		return 0, toggled, err
	}
	var last time.Time
	deadline := t0.Add(lspTimeout)
	for wantTask || wantPartner {
		m, err := c.next(deadline)
		if err != nil {
			return 0, toggled, fmt.Errorf("waiting for publications (task %v, partner %v): %w", wantTask, wantPartner, err)
		}
		if m.Method != "textDocument/publishDiagnostics" {
			continue
		}
		var p publication
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return 0, toggled, err
		}
		switch lspclient.URIPath(p.URI) {
		case doc.path:
			if p.Version == nil || *p.Version != doc.version {
				continue
			}
			if p.has("dependency-cycle") != doc.cycle {
				return 0, toggled, fmt.Errorf("version %d: dependency-cycle published = %v, want %v: %+v", doc.version, !doc.cycle, doc.cycle, p.Diagnostics)
			}
			wantTask = false
		case doc.partnerPath:
			if !wantPartner {
				continue
			}
			if p.has("dependency-cycle") != doc.cycle {
				return 0, toggled, fmt.Errorf("partner after version %d: dependency-cycle published = %v, want %v", doc.version, !doc.cycle, doc.cycle)
			}
			wantPartner = false
		default:
			continue
		}
		last = m.At
	}
	return last.Sub(t0), toggled, nil
}

// reportLatencies reports p50, p95 and max of lat (milliseconds), with
// prefix before each unit.
func reportLatencies(b *testing.B, lat []float64, prefix string) {
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(percentile(lat, 50), prefix+"p50-ms")
	b.ReportMetric(percentile(lat, 95), prefix+"p95-ms")
	b.ReportMetric(slices.Max(lat), prefix+"max-ms")
	b.ReportMetric(float64(len(lat)), prefix+"keystrokes")
}

// percentile is the nearest-rank p-th percentile of xs.
func percentile(xs []float64, p float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// cycleTask picks the benchmark's task file T in W: the first task (in name
// order) of the first story without findings that has a sibling P with T in
// P's blockedBy. Adding P to T's blockedBy then makes a two-task dependency
// cycle, which puts a finding in both files; removing it clears both. It
// returns T's path relative to W and P's id.
func cycleTask(b *testing.B, w string, want *expectation) (rel, partner string) {
	b.Helper()
	storiesDir := filepath.Join(w, ".saga", "stories")
	stories, err := os.ReadDir(storiesDir)
	if err != nil {
		b.Fatal(err)
	}
	type taskDoc struct {
		ID        string   `json:"id"`
		Status    string   `json:"status"`
		BlockedBy []string `json:"blockedBy"`
	}
	for _, s := range stories {
		prefix := ".saga/stories/" + s.Name() + "/"
		clean := true
		for f := range want.rels {
			if strings.HasPrefix(f, prefix) {
				clean = false
				break
			}
		}
		if !clean || !s.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(storiesDir, s.Name()))
		if err != nil {
			b.Fatal(err)
		}
		var tasks []taskDoc
		for _, f := range files {
			if f.Name() == "story.json" || !strings.HasSuffix(f.Name(), ".json") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(storiesDir, s.Name(), f.Name()))
			if err != nil {
				b.Fatal(err)
			}
			var t taskDoc
			if json.Unmarshal(data, &t) != nil || t.ID+".json" != f.Name() {
				continue
			}
			tasks = append(tasks, t)
		}
		for _, t := range tasks {
			if t.Status != "pending" {
				continue
			}
			for _, p := range tasks {
				if slices.Contains(p.BlockedBy, t.ID) && !slices.Contains(t.BlockedBy, p.ID) {
					return prefix + t.ID + ".json", p.ID
				}
			}
		}
	}
	b.Fatal("W has no clean story with a task another task is blocked by")
	return "", ""
}

// keystrokeDoc is the open task file as the editor holds it, and the
// benchmark's typing: keystroke i (from 0) with i%10 == 9 toggles the
// partner's id at the head of blockedBy (a pasted `"partner", `, making or
// breaking the dependency cycle); the others alternately type one letter
// at the end of the subject and delete it. The file stays valid JSON and
// schema-valid throughout.
type keystrokeDoc struct {
	path, partnerPath string
	partner           string
	text              string
	version           int
	n                 int  // keystrokes typed
	typed             bool // a letter is at the end of the subject
	cycle             bool // the partner is in blockedBy
	pasted            string
}

func newKeystrokeDoc(path, text, partner string) *keystrokeDoc {
	return &keystrokeDoc{path: path, partnerPath: filepath.Join(filepath.Dir(path), partner+".json"),
		partner: partner, text: text, version: 1}
}

// textEdit is an incremental content change.
type textEdit struct {
	Range struct {
		Start lspclient.Position `json:"start"`
		End   lspclient.Position `json:"end"`
	} `json:"range"`
	Text string `json:"text"`
}

// next makes the next keystroke: it updates the text and version and
// returns the change to send, and whether it toggled the cycle.
func (d *keystrokeDoc) next() (textEdit, bool) {
	i := d.n
	d.n++
	d.version++
	if i%10 == 9 {
		at := strings.Index(d.text, `"blockedBy": [`) + len(`"blockedBy": [`)
		if !d.cycle {
			d.pasted = fmt.Sprintf("%q, ", d.partner)
			if d.text[at] == ']' {
				d.pasted = fmt.Sprintf("%q", d.partner)
			}
			d.cycle = true
			return d.replace(at, at, d.pasted), true
		}
		d.cycle = false
		return d.replace(at, at+len(d.pasted), ""), true
	}
	end := subjectEnd(d.text)
	if !d.typed {
		d.typed = true
		return d.replace(end, end, string(rune('a'+(i/2)%26))), false
	}
	d.typed = false
	return d.replace(end-1, end, ""), false
}

// replace edits text[from:to] to s and returns the change.
func (d *keystrokeDoc) replace(from, to int, s string) textEdit {
	var e textEdit
	e.Range.Start, e.Range.End = lspclient.PositionAt(d.text, from), lspclient.PositionAt(d.text, to)
	e.Text = s
	d.text = d.text[:from] + s + d.text[to:]
	return e
}

// subjectEnd is the offset of the closing quote of the subject's value.
func subjectEnd(text string) int {
	const key = `"subject": "`
	i := strings.Index(text, key)
	if i < 0 {
		panic(errors.New("task file without a subject"))
	}
	for j := i + len(key); j < len(text); j++ {
		switch text[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	panic(errors.New("unterminated subject"))
}
