package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Nvim is one headless Neovim run of a Lua test script. The script loads
// the shared harness (nvim/harness.lua beside this file) with
//
//	local h = dofile(os.getenv('SAGA_NVIM_HARNESS'))
//
// records what it sees in h.result and ends with h.main(run), which writes
// h.result as JSON to the file $SAGA_NVIM_RESULT names and quits.
type Nvim struct {
	Script  string            // the Lua script, relative to the test's folder or absolute
	Dir     string            // Neovim's working directory
	Env     []string          // added to the clean environment
	Timeout time.Duration     // for the whole run
	Logs    map[string]string // files worth reading when the test fails: name → path
}

// NvimResult is what h.main writes for every script: its Lua error, the
// steps it recorded (name@ms) and Neovim's version. A script's result type
// embeds it.
type NvimResult struct {
	Error       string   `json:"error"`
	Steps       []string `json:"steps"`
	NvimVersion string   `json:"nvim_version"`
}

// RunNvim runs n in `nvim --headless --clean -u script`, with Neovim's own
// files kept in a temp dir, and decodes the script's result into result. The
// test is skipped without nvim; it fails when Neovim does not finish in
// time or the script wrote no result, and shows Neovim's output, its
// lsp.log, the result and n.Logs when it fails.
func RunNvim(t *testing.T, n Nvim, result any) {
	t.Helper()
	nvim := NeedsTool(t, "nvim", "Debian: apt-get install -y neovim; it runs the editor tests")
	script, err := filepath.Abs(n.Script)
	if err != nil {
		t.Fatal(err)
	}
	_, file, _, _ := runtime.Caller(0)
	tmp := t.TempDir()
	resultFile := filepath.Join(tmp, "result.json")
	xdg := filepath.Join(tmp, "xdg")
	var env []string
	for _, kv := range CleanEnv() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "XDG_") && !strings.HasPrefix(k, "NVIM") && k != "VIMINIT" && k != "MYVIMRC" {
			env = append(env, kv)
		}
	}
	env = append(env,
		"SAGA_NVIM_HARNESS="+filepath.Join(filepath.Dir(file), "nvim", "harness.lua"),
		"SAGA_NVIM_RESULT="+resultFile,
		"XDG_CONFIG_HOME="+filepath.Join(xdg, "config"),
		"XDG_DATA_HOME="+filepath.Join(xdg, "data"),
		"XDG_STATE_HOME="+filepath.Join(xdg, "state"),
		"XDG_CACHE_HOME="+filepath.Join(xdg, "cache"),
	)
	ctx, cancel := context.WithTimeout(context.Background(), n.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-u", script)
	cmd.Dir = n.Dir
	cmd.Env = append(env, n.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	t.Logf("nvim ran %s for %v", filepath.Base(script), time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		t.Logf("nvim stdout:\n%s\nnvim stderr:\n%s", stdout.String(), stderr.String())
		logs := map[string]string{"neovim lsp.log": filepath.Join(xdg, "cache", "nvim", "lsp.log"), "result": resultFile}
		for name, path := range n.Logs {
			logs[name] = path
		}
		for name, path := range logs {
			if b, err := os.ReadFile(path); err == nil {
				t.Logf("%s (%s):\n%s", name, path, b)
			}
		}
	})
	if ctx.Err() != nil {
		t.Fatalf("nvim did not finish %s within %v (%v)", n.Script, n.Timeout, runErr)
	}
	if runErr != nil {
		t.Errorf("nvim: %v", runErr)
	}
	raw, err := os.ReadFile(resultFile)
	if err != nil {
		t.Fatalf("%s wrote no result: %v", n.Script, err)
	}
	if err := json.Unmarshal(raw, result); err != nil {
		t.Fatalf("decode the result of %s: %v\n%s", n.Script, err, raw)
	}
}
