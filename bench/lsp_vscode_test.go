//go:build linux

package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
)

// VS Code's JSON language server (vscode-json-language-server from the npm
// package vscode-langservers-extracted, installed by bench/vscode-json/run.sh
// into .bench/vscode-json) validating the same task file of W against the
// task schema, with the same keystrokes as BenchmarkLSPKeystroke: the
// side-by-side comparison docs/architecture.md#budgets quotes.
//
// The server validates in one of two modes, chosen by the client's
// capabilities at initialize:
//   - push (the client does not declare textDocument.diagnostic): every
//     change re-arms a fixed 500 ms timer (validationDelayMs in its
//     utils/validation.js; no setting changes it), and the diagnostics are
//     pushed when it fires. This is what p50-ms/p95-ms/max-ms measure, from
//     writing didChange to the publishDiagnostics for the file.
//   - pull (the client declares it, as VS Code itself does): nothing is
//     pushed; the client asks with textDocument/diagnostic. pull-p50-ms and
//     pull-p95-ms measure from writing didChange to the answer of a request
//     sent right after it: the validation itself, without the timer.

// vscodePushPerOp and vscodePullPerOp are the keystrokes one op types in
// each mode; push keystrokes cost the 500 ms timer each.
const (
	vscodePushPerOp = 3
	vscodePullPerOp = 30
)

// vscodeJSONServer is the installed server, or skips the benchmark.
func vscodeJSONServer(b *testing.B) string {
	b.Helper()
	server := filepath.Join(testkit.ModuleRoot(b), ".bench", "vscode-json", "node_modules", ".bin", "vscode-json-language-server")
	if !fileExists(server) {
		testkit.Needs(b, server+" is missing: run bench/vscode-json/run.sh (it installs vscode-langservers-extracted with npm)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		testkit.Needs(b, "node is not on PATH")
	}
	return server
}

func BenchmarkVSCodeJSONKeystroke(b *testing.B) {
	server := vscodeJSONServer(b)
	bin := builtBinary(b)
	schema, err := exec.Command(bin, "schema", "task").Output()
	if err != nil {
		b.Fatalf("saga-lsp schema task: %v", err)
	}
	if !json.Valid(schema) {
		b.Fatal("saga-lsp schema task printed invalid JSON")
	}
	w := workloadW(b)
	task, partner := cycleTask(b, w, expectedFindings(b, bin, w))

	push := startVSCodeJSON(b, server, w, schema, false)
	defer push.stop()
	pull := startVSCodeJSON(b, server, w, schema, true)
	defer pull.stop()
	pushDoc := vscodeOpen(b, push, w, task, partner, false)
	pullDoc := vscodeOpen(b, pull, w, task, partner, true)

	var pushLat, pullLat []float64
	for b.Loop() {
		for range vscodePushPerOp {
			d, err := vscodeKeystroke(push, pushDoc, false)
			if err != nil {
				b.Fatalf("push keystroke %d: %v", pushDoc.n, err)
			}
			pushLat = append(pushLat, d.Seconds()*1e3)
		}
		for range vscodePullPerOp {
			d, err := vscodeKeystroke(pull, pullDoc, true)
			if err != nil {
				b.Fatalf("pull keystroke %d: %v", pullDoc.n, err)
			}
			pullLat = append(pullLat, d.Seconds()*1e3)
		}
	}
	reportLatencies(b, pushLat, "")
	if len(pullLat) > 0 {
		b.ReportMetric(percentile(pullLat, 50), "pull-p50-ms")
		b.ReportMetric(percentile(pullLat, 95), "pull-p95-ms")
	}
	if rss := push.peakRSSMB(); rss > 0 {
		b.ReportMetric(rss, "peak-RSS-MB")
	}
}

// startVSCodeJSON starts the JSON server, initializes it on w (declaring
// pull diagnostics or not) and configures the task schema for every .json
// file. Schemas are only ever read from files or given inline: the client
// claims http(s) (handledSchemaProtocols) and refuses every fetch, so the
// benchmark never touches the network.
func startVSCodeJSON(b *testing.B, server, w string, schema []byte, pull bool) *lspProc {
	b.Helper()
	c, err := startLSP(server, []string{"--stdio"}, func(method string, _ json.RawMessage) (any, error) {
		if method == "vscode/content" {
			return nil, errors.New("the benchmark client serves no schema content")
		}
		return nil, nil
	})
	if err != nil {
		b.Fatalf("start %s: %v", server, err)
	}
	caps := map[string]any{"textDocument": map[string]any{
		"synchronization":    map[string]any{"didSave": true},
		"publishDiagnostics": map[string]any{},
	}}
	if pull {
		caps["textDocument"].(map[string]any)["diagnostic"] = map[string]any{}
	}
	params := map[string]any{
		"processId":             os.Getpid(),
		"clientInfo":            map[string]string{"name": "saga-lsp bench"},
		"rootUri":               lspclient.FileURI(w),
		"capabilities":          caps,
		"initializationOptions": map[string]any{"handledSchemaProtocols": []string{"file"}, "provideFormatter": false},
	}
	if _, err := c.Call("initialize", params, lspTimeout); err != nil {
		c.stop()
		b.Fatal(err)
	}
	c.Notify("initialized", struct{}{})
	// The server reads json.schemas (fileMatch + inline schema, registered
	// as vscode://schemas/custom/<index>) and validates only when
	// json.validate.enable is true.
	c.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"json": map[string]any{
		"validate": map[string]any{"enable": true},
		"schemas":  []any{map[string]any{"fileMatch": []string{"*.json"}, "schema": json.RawMessage(schema)}},
	}}})
	return c
}

// vscodeOpen proves the schema is in force on a throwaway file that breaks
// it, then opens the task file and waits for its (empty) diagnostics.
func vscodeOpen(b *testing.B, c *lspProc, w, rel, partner string, pull bool) *keystrokeDoc {
	b.Helper()
	probe := filepath.Join(w, ".saga", "schema-probe.json") // never written to disk
	p, err := vscodeDiagnose(c, probe, `{"id": "Not A Slug", "subject": ""}`, pull)
	if err != nil {
		b.Fatal(err)
	}
	if len(p.Diagnostics) == 0 {
		b.Fatal("the JSON server found nothing wrong with a task that breaks the schema: the schema is not in force")
	}
	c.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": lspclient.FileURI(probe)}})

	path := filepath.Join(w, filepath.FromSlash(rel))
	text, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	doc := newKeystrokeDoc(path, string(text), partner)
	p, err = vscodeDiagnose(c, path, doc.text, pull)
	if err != nil {
		b.Fatal(err)
	}
	if len(p.Diagnostics) > 0 {
		b.Fatalf("the JSON server reports %s, which is valid: %+v", rel, p.Diagnostics)
	}
	c.drain()
	return doc
}

// vscodeDiagnose opens a document and returns its first diagnostics.
func vscodeDiagnose(c *lspProc, path, text string, pull bool) (publication, error) {
	c.drain()
	err := c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": lspclient.FileURI(path), "languageId": "json", "version": 1, "text": text}})
	if err != nil {
		return publication{}, err
	}
	if pull {
		return pullDiagnostics(c, path)
	}
	_, p, err := pushedDiagnostics(c, path, time.Now().Add(lspTimeout))
	return p, err
}

// vscodeKeystroke types the next keystroke and waits for the file's
// diagnostics: pushed, or pulled right after the change. The JSON server
// publishes no version, but the benchmark waits for each keystroke's
// diagnostics before the next, so the first after the change is its own.
func vscodeKeystroke(c *lspProc, doc *keystrokeDoc, pull bool) (time.Duration, error) {
	ed, _ := doc.next()
	t0 := time.Now()
	err := c.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": lspclient.FileURI(doc.path), "version": doc.version},
		"contentChanges": []any{ed},
	})
	if err != nil {
		return 0, err
	}
	var at time.Time
	var p publication
	if pull {
		m, err := c.Call("textDocument/diagnostic", map[string]any{"textDocument": map[string]any{"uri": lspclient.FileURI(doc.path)}}, lspTimeout)
		if err != nil {
			return 0, err
		}
		if err := decodeReport(m.Result, &p); err != nil {
			return 0, err
		}
		at = m.At
	} else {
		at, p, err = pushedDiagnostics(c, doc.path, t0.Add(lspTimeout))
		if err != nil {
			return 0, err
		}
	}
	if len(p.Diagnostics) > 0 {
		return 0, fmt.Errorf("version %d is valid but the JSON server reports %+v", doc.version, p.Diagnostics)
	}
	return at.Sub(t0), nil
}

// pushedDiagnostics waits for the next publishDiagnostics for path.
func pushedDiagnostics(c *lspProc, path string, deadline time.Time) (time.Time, publication, error) {
	for {
		m, err := c.next(deadline)
		if err != nil {
			return time.Time{}, publication{}, fmt.Errorf("no diagnostics pushed for %s: %w", path, err)
		}
		if m.Method != "textDocument/publishDiagnostics" {
			continue
		}
		var p publication
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return time.Time{}, p, err
		}
		if lspclient.URIPath(p.URI) == path {
			return m.At, p, nil
		}
	}
}

// pullDiagnostics asks for a document's diagnostics.
func pullDiagnostics(c *lspProc, path string) (publication, error) {
	m, err := c.Call("textDocument/diagnostic", map[string]any{"textDocument": map[string]any{"uri": lspclient.FileURI(path)}}, lspTimeout)
	if err != nil {
		return publication{}, err
	}
	var p publication
	return p, decodeReport(m.Result, &p)
}

// decodeReport reads a full document diagnostic report into p.
func decodeReport(raw json.RawMessage, p *publication) error {
	var r struct {
		Kind  string          `json:"kind"`
		Items json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	if r.Kind != "full" {
		return fmt.Errorf("diagnostic report of kind %q, want full", r.Kind)
	}
	return json.Unmarshal(r.Items, &p.Diagnostics)
}
