//go:build unix

package control_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// Where the checks of a story's tasks cannot be confined (user namespaces
// blocked, as by Ubuntu 24.04's AppArmor default), `run` of the story and
// of its epic refuses, naming the fix, unless --allow-unconfined-checks is
// given: the worker would refuse every completion of such a task. The
// bwrap on PATH fails as the real one does there.
func TestRunRefusedWhereChecksCannotBeConfined(t *testing.T) {
	h := newTmuxEnv(t)
	for _, task := range []string{".saga/stories/" + story + "/write-tests.json", ".saga/stories/user-auth--setup-db/write-migrations.json"} {
		p := filepath.Join(h.root, filepath.FromSlash(task))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		checked := strings.Replace(string(data), `"blockedBy": [`, `"checks": ["true"], "blockedBy": [`, 1)
		if checked == string(data) {
			t.Fatalf("%s: no blockedBy to put checks beside", task)
		}
		os.WriteFile(p, []byte(checked), 0o644)
	}
	testkit.Git(t, h.root, "commit", "-qam", "checks")
	bin := t.TempDir()
	fake := "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "bwrap"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	head := testkit.Git(t, h.root, "rev-parse", "HEAD")
	for _, target := range []string{story, "user-auth"} {
		r := h.saga(t, env, "run", target, "--dry-run")
		for _, want := range []string{"not starting ", "has checks, which cannot run here: bubblewrap cannot create a user namespace here (bwrap: setting up uid map: Permission denied)",
			"sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0", "--allow-unconfined-checks"} {
			if r.Code != 1 || !strings.Contains(r.Stderr, want) {
				t.Errorf("run %s: exit %d, want 1 and %q\n%s%s", target, r.Code, want, r.Stdout, r.Stderr)
			}
		}
		if left := leftBehind(t, h, head); len(left) > 0 {
			t.Fatalf("run %s left %v behind", target, left)
		}
	}
	if r := h.saga(t, env, "run", story, "--dry-run", "--allow-unconfined-checks"); r.Code != 0 {
		t.Fatalf("run --allow-unconfined-checks: exit %d\n%s", r.Code, r.Stderr)
	}
}
