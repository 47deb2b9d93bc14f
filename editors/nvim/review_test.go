package nvim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

type reviewResult struct {
	scriptResult
	Comment *struct {
		Messages1 []string `json:"messages1"`
		Messages2 []string `json:"messages2"`
	} `json:"comment"`
	Address []string `json:"address"`
	Resolve []string `json:"resolve"`
	Land    []string `json:"land"`
}

// TestPluginReview runs test/review.lua against the real server:
// :SagaReviewComment on line 2 of a file in a story's worktree writes one
// review task of kind editor into the worktree's story folder, and the same
// comment again is that task; :SagaAddressReview runs the server's
// addressReview (its refusal of an unknown story names the command);
// :SagaResolve and :SagaLand run resolveConflict and land.
func TestPluginReview(t *testing.T) {
	ws := testkit.CopyExample(t, "workspace")
	testkit.InitRepo(t, ws)
	const story = "add-logout-button"
	wt := filepath.Join(ws, ".saga", "worktrees", story)
	testkit.CopyInto(t, filepath.Join(ws, ".saga", "stories", story), filepath.Join(wt, ".saga", "stories", story))
	testkit.WriteFiles(t, wt, map[string]string{"notes.txt": "one\ntwo\nthree\n"})
	var res reviewResult
	partErr := runScript(t, "review.lua", ws, 60*time.Second, nil, &res)

	t.Run("comment", func(t *testing.T) {
		partErr(t, "comment")
		c := res.Comment
		if c == nil || len(c.Messages1) == 0 || len(c.Messages2) == 0 {
			t.Fatalf("messages: %+v", c)
		}
		if !strings.HasPrefix(c.Messages1[0], "saga: review task review-") || strings.Contains(c.Messages1[0], "already there") {
			t.Errorf("the first comment: %q", c.Messages1)
		}
		if !strings.Contains(c.Messages2[0], "(already there)") {
			t.Errorf("the same comment again: %q", c.Messages2)
		}
		dir := filepath.Join(wt, ".saga", "stories", story)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var tasks []string
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "review-") {
				tasks = append(tasks, testkit.FileText(filepath.Join(dir, e.Name())))
			}
		}
		if len(tasks) != 1 || !strings.Contains(tasks[0], `"kind": "editor"`) || !strings.Contains(tasks[0], `"path": "notes.txt"`) ||
			!strings.Contains(tasks[0], `"line": 2`) || !strings.Contains(tasks[0], "> Why does the button log out twice?") {
			t.Errorf("review tasks in the worktree: %q", tasks)
		}
	})

	t.Run("address", func(t *testing.T) {
		partErr(t, "address")
		if len(res.Address) == 0 || !strings.Contains(res.Address[0], "addressReview") || !strings.Contains(res.Address[0], "no-such-story") {
			t.Errorf(":SagaAddressReview no-such-story: %q", res.Address)
		}
	})

	// :SagaResolve and :SagaLand run the server's resolveConflict and
	// land: a story without an open conflict is refused with the reason.
	t.Run("land", func(t *testing.T) {
		partErr(t, "land")
		if len(res.Resolve) == 0 || !strings.Contains(res.Resolve[0], "resolveConflict") || !strings.Contains(res.Resolve[0], "has no open conflict to resolve") {
			t.Errorf(":SagaResolve add-logout-button: %q", res.Resolve)
		}
		if len(res.Land) == 0 || !strings.Contains(res.Land[0], "land") || !strings.Contains(res.Land[0], "no-such-story") {
			t.Errorf(":SagaLand --story no-such-story: %q", res.Land)
		}
	})
}
