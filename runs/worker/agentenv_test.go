//go:build unix

package worker_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestAgentWithoutWorkerCredentials: the worker's GitHub token and the git
// configuration carrying its credential helper (how a GitHub Actions job
// gives them to the worker) never reach the agent; claude's own credential
// does, and the worker still opens its pull request with the token.
func TestAgentWithoutWorkerCredentials(t *testing.T) {
	f := newFixture(t, true)
	log := filepath.Join(t.TempDir(), "claude.log")
	t.Setenv("SAGA_STANDIN_LOG", log)
	for k, v := range map[string]string{
		"ANTHROPIC_API_KEY":     "sk-ant-test",
		"GH_TOKEN":              "ghs_job_token",
		"GITHUB_TOKEN":          "ghs_job_token",
		"ACTIONS_RUNTIME_TOKEN": "runtime",
		"GIT_CONFIG_COUNT":      "1",
		"GIT_CONFIG_KEY_0":      "credential.helper",
		"GIT_CONFIG_VALUE_0":    "",
	} {
		t.Setenv(k, v)
	}
	code, out := f.run("user-auth--api", "all", nil)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	file, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	runs := 0
	for sc := bufio.NewScanner(file); sc.Scan(); runs++ {
		var inv struct {
			Env     map[string]string `json:"env"`
			Secrets []string          `json:"secrets"`
		}
		if err := json.Unmarshal(sc.Bytes(), &inv); err != nil {
			t.Fatalf("%s: %v", log, err)
		}
		if !slices.Contains(inv.Secrets, "ANTHROPIC_API_KEY") {
			t.Errorf("run %d: claude lacks ANTHROPIC_API_KEY; its credentials: %v", runs, inv.Secrets)
		}
		for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "GIT_CONFIG_KEY_0"} {
			if slices.Contains(inv.Secrets, k) {
				t.Errorf("run %d: %s reached the agent", runs, k)
			}
		}
		for _, k := range []string{"GIT_CONFIG_COUNT", "GIT_CONFIG_VALUE_0"} {
			if _, ok := inv.Env[k]; ok {
				t.Errorf("run %d: %s reached the agent", runs, k)
			}
		}
	}
	if runs == 0 {
		t.Fatalf("%s: no run logged", log)
	}
	if prs := f.ghPRs(); len(prs) != 1 {
		t.Errorf("pull requests %v, want the story's one", prs)
	}
}
