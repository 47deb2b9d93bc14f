// Package editors checks the configurations docs/editors.md gives for
// editors the project has no client of its own for, in the real editor
// where this machine has it: Emacs with eglot (Debian's emacs-nox and
// elpa-eglot, which .ci/run installs). The others there are marked untested.
package editors

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// docBlock is the one fenced block of lang in docs/editors.md.
func docBlock(t *testing.T, lang string) string {
	t.Helper()
	doc := testkit.ReadFile(t, filepath.Join(testkit.ModuleRoot(t), "docs", "editors.md"))
	blocks := regexp.MustCompile("(?s)```"+lang+"\n(.*?)\n```").FindAllStringSubmatch(doc, -1)
	if len(blocks) != 1 {
		t.Fatalf("docs/editors.md has %d ```%s blocks, want one", len(blocks), lang)
	}
	return blocks[0][1]
}

// The eglot configuration of docs/editors.md, as written: a task file under
// .saga/ gets saga-lsp (from PATH) and its diagnostics through Flymake.
func TestEmacsEglot(t *testing.T) {
	emacs := testkit.NeedsTool(t, "emacs", "Debian: apt-get install -y emacs-nox elpa-eglot")
	tmp := t.TempDir()
	config := filepath.Join(tmp, "config.el")
	if err := os.WriteFile(config, []byte(docBlock(t, "elisp")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := testkit.CopyExample(t, "workspace")
	testkit.InitRepo(t, ws) // eglot roots the server at the project: the git repository
	task := filepath.Join(ws, ".saga", "stories", "user-auth--api", "logout-endpoint.json")
	text := strings.Replace(testkit.ReadFile(t, task), `"blockedBy": ["login-endpoint"]`, `"blockedBy": ["logn-endpoint"]`, 1)
	if err := os.WriteFile(task, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	harness, err := filepath.Abs("eglot.el")
	if err != nil {
		t.Fatal(err)
	}
	r := testkit.Run(t, ws, []string{
		"PATH=" + filepath.Dir(testkit.Binary(t)) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + filepath.Join(tmp, "home"),
		"SAGA_SESSION_DIR=" + filepath.Join(tmp, "sessions"),
		"SAGA_EMACS_CONFIG=" + config,
		"SAGA_FILE=" + task,
	}, "", emacs, "--batch", "-Q", "-l", harness)
	line := ""
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.HasPrefix(l, "RESULT ") {
			line = strings.TrimPrefix(l, "RESULT ")
		}
	}
	if r.Code != 0 || line == "" {
		if strings.Contains(r.Stderr, `"eglot"`) && strings.Contains(r.Stderr, "Cannot open load file") {
			testkit.Needs(t, "eglot is not installed (Debian: apt-get install -y elpa-eglot)")
		}
		t.Fatalf("emacs: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	var res struct {
		Mode       string   `json:"mode"`
		Server     string   `json:"server"`
		Command    []string `json:"command"`
		Diagnostic string   `json:"diagnostic"`
	}
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	t.Logf("%+v", res)
	if res.Mode != "saga-json-mode" || res.Server != "saga-lsp" || len(res.Command) != 2 || res.Command[0] != "saga-lsp" || res.Command[1] != "serve" {
		t.Errorf("mode %q, server %q, command %q: want saga-json-mode served by saga-lsp serve", res.Mode, res.Server, res.Command)
	}
	if !strings.Contains(res.Diagnostic, "logn-endpoint") {
		t.Errorf("Flymake diagnostic %q, want saga-lsp's unknown-dependency naming logn-endpoint\nstderr: %s", res.Diagnostic, r.Stderr)
	}
}
