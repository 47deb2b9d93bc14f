//go:build unix

package cli_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestDashboardCommand: `saga-lsp dashboard` prints its URL (or {"url"})
// first, serves it, warns off loopback, and stops cleanly on SIGINT.
func TestDashboardCommand(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	bin := testkit.Binary(t)
	env := append(testkit.CleanEnv(), "SAGA_SESSION_DIR="+t.TempDir())
	for _, tc := range []struct {
		args []string
		json bool
		warn bool
	}{
		{args: []string{"dashboard"}},
		{args: []string{"dashboard", ".saga/stories", "--format", "json"}, json: true},
		{args: []string{"dashboard", "--addr", "0.0.0.0:0"}, warn: true},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.Dir, cmd.Env = root, env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			t.Fatalf("%v: no first line: %v\n%s", tc.args, err, stderr.String())
		}
		url := strings.TrimSpace(line)
		if tc.json {
			var v struct{ URL string }
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Errorf("%v: first line %q", tc.args, line)
			}
			url = v.URL
		}
		if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
			t.Errorf("%v: URL %q", tc.args, url)
		}
		jar, _ := cookiejar.New(nil) // the token becomes a cookie, then a redirect
		res, err := (&http.Client{Jar: jar, Timeout: 10 * time.Second}).Get(url)
		if err != nil || res.StatusCode != 200 {
			t.Errorf("%v: GET %s: %v %v", tc.args, url, res, err)
		} else {
			res.Body.Close()
		}
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%v: after SIGINT: %v\n%s", tc.args, err, stderr.String())
			}
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v: did not stop on SIGINT", tc.args)
		}
		if got := strings.Contains(stderr.String(), "reachable from other machines"); got != tc.warn {
			t.Errorf("%v: warning %v, want %v:\n%s", tc.args, got, tc.warn, stderr.String())
		}
	}
	// Not a folder, no workspace: exit 2, nothing served.
	for _, args := range [][]string{{"dashboard", "nope"}, {"dashboard", "--format", "yaml"}} {
		r := testkit.Run(t, root, env, "", bin, args...)
		if r.Code != 2 || r.Stdout != "" {
			t.Errorf("%v: exit %d, stdout %q", args, r.Code, r.Stdout)
		}
	}
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(outside, "x"), 0o755)
	if r := testkit.Run(t, outside, env, "", bin, "dashboard"); r.Code != 2 || !strings.Contains(r.Stderr, ".saga") {
		t.Errorf("outside a workspace: exit %d\n%s", r.Code, r.Stderr)
	}
}
