package dashboard_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/review"
	"github.com/saga-ai/saga-lsp/store"
)

// A comment on a story's review diff in the dashboard becomes a review
// task of kind editor, as an editor's does (docs/review.md#a-review-without-github):
// schema-valid, the same comment twice one task, an empty one refused.
func TestReviewCommentBecomesATask(t *testing.T) {
	root := shopRepo(t)
	testkit.Git(t, root, "checkout", "-q", "-b", "story/shop--docs")
	testkit.WriteFiles(t, root, map[string]string{"docs/guide.md": "# Guide\n\nHow to shop.\n"})
	testkit.Git(t, root, "add", "-A")
	testkit.Git(t, root, "commit", "-q", "-m", "docs")
	testkit.Git(t, root, "checkout", "-q", "main")
	s := serve(t, root)
	c := s.client(t)
	key := repoKeyOf(root)
	page := s.base + "/r/" + key + "/story/shop--docs/review?file=docs/guide.md"
	if res, body := get(t, c, page, nil); res.StatusCode != 200 || !strings.Contains(body, `id="review-comment"`) || !strings.Contains(body, `value="docs/guide.md"`) {
		t.Fatalf("the review page has no comment form: %s\n%s", res.Status, body)
	}
	act := s.base + "/r/" + key + "/story/shop--docs/comment"
	hdr := map[string]string{"Origin": s.base, "Accept": "application/json"}
	form := url.Values{"path": {"docs/guide.md"}, "line": {"3"}, "body": {"Say where the cart is."}}
	var answers []string
	for range 2 {
		res, body := post(t, c, act, form, hdr)
		var a struct {
			OK      bool   `json:"ok"`
			Message string `json:"message"`
		}
		json.Unmarshal([]byte(body), &a)
		if res.StatusCode != 200 || !a.OK {
			t.Fatalf("comment: %s %s", res.Status, body)
		}
		answers = append(answers, a.Message)
	}
	id := review.TaskID(review.EditorKey(review.EditorComment{Story: "shop--docs", Path: "docs/guide.md", Line: 3, Body: "Say where the cart is.", Author: os.Getenv("USER")}))
	if !strings.Contains(answers[0], "Review task "+id) || !strings.Contains(answers[1], "already review task "+id) {
		t.Errorf("answers: %q", answers)
	}
	p, _ := store.NewParser()
	st, err := p.LoadStory(root, "shop--docs")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range st.Tasks {
		if task.Review != nil {
			n++
			if task.Review.Kind != review.KindEditor || task.Review.Path != "docs/guide.md" || task.Review.Line != 3 || len(task.File.Local) > 0 {
				t.Errorf("the task: %+v %v", task.Review, task.File.Local)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d review tasks, want 1", n)
	}
	if res, body := post(t, c, act, url.Values{"path": {"docs/guide.md"}, "body": {"  "}}, hdr); res.StatusCode != 400 || !strings.Contains(body, "empty comment") {
		t.Errorf("an empty comment: %s %s", res.Status, body)
	}
	if _, err := os.Stat(filepath.Join(root, ".saga/stories/shop--docs", id+".json")); err != nil {
		t.Errorf("the task's file: %v", err)
	}
}
