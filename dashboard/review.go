package dashboard

// Review (diff): the files a story's branch changed against its base —
// control.ReviewStory, the operation behind the language server's
// reviewStory — and one file's diff, asked for by its path, which must be
// one of those files: a path from the URL never reaches git otherwise.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/store"
)

// maxDiff bounds the diff text shown.
const maxDiff = 1 << 20

// protectedPaths are files an agent's change to deserves a second look:
// the run's own state and checks, the agent's and the editor's settings,
// CI, the repository's git settings.
var protectedPaths = []struct{ prefix, why string }{
	{".saga/", "SAGA's files: a task's checks decide verified completion"},
	{".claude/", "Claude Code's settings, hooks and skills"},
	{".mcp.json", "MCP servers Claude Code starts"},
	{".github/", "CI workflows and repository settings"},
	{".gitlab-ci.yml", "CI configuration"},
	{".gitmodules", "git submodules"},
	{".gitattributes", "git attributes (filters, diff drivers)"},
	{".vscode/", "editor settings and tasks"},
	{".idea/", "editor settings"},
	{".envrc", "shell environment (direnv)"},
}

func protectedWhy(p string) string {
	for _, pp := range protectedPaths {
		if p == strings.TrimSuffix(pp.prefix, "/") || strings.HasPrefix(p, pp.prefix) {
			return pp.why
		}
	}
	return ""
}

type reviewFile struct {
	Path, OldPath, Status, Protected, Href string
	Selected                               bool
}

type diffLine struct {
	Class, Text string
}

type reviewContent struct {
	Repo, Story, Branch, Base, Worktree, Error string
	Files                                      []reviewFile
	Selected                                   string
	Diff                                       []diffLine
	DiffTruncated                              bool
	Protected                                  int
}

func (s *Server) review(w http.ResponseWriter, r *http.Request) {
	rp := s.repoOf(w, r)
	if rp == nil {
		return
	}
	id := r.PathValue("id")
	v := s.newRepoView(rp)
	if v.ws.Story(id) == nil || !store.ValidCanonical(id) {
		s.notFound(w, r, fmt.Sprintf("no story %q in %s", id, rp.key))
		return
	}
	p := s.base(r, "Review "+id, "review", []*repoView{v})
	p.ScopeRepo, p.ScopeID = rp.key, id
	c := reviewContent{Repo: rp.key, Story: id}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	rv, err := control.ReviewStory(ctx, control.ReviewOptions{Root: rp.src.Root, Story: id, Env: s.env})
	if err != nil {
		c.Error = err.Error()
		var ue *store.UsageError
		if !errors.As(err, &ue) {
			s.log.Warn("dashboard: review", "story", id, "err", err)
		}
		p.Content = c
		s.render(w, http.StatusOK, p, func(h *hw) { h.review(p, c) })
		return
	}
	c.Branch, c.Base, c.Worktree = rv.Branch, rv.Base, rv.Worktree
	want := r.URL.Query().Get("file")
	var sel *reviewFile
	for _, f := range rv.Files {
		rf := reviewFile{Path: f.Path, OldPath: f.OldPath, Status: f.Status, Protected: cmpOr(protectedWhy(f.Path), protectedWhy(f.OldPath)),
			Href: storyHref(rp.key, id) + "/review?file=" + url.QueryEscape(f.Path)}
		if rf.Protected != "" {
			c.Protected++
		}
		if want != "" && f.Path == want {
			rf.Selected = true
		}
		c.Files = append(c.Files, rf)
		if rf.Selected {
			sel = &c.Files[len(c.Files)-1]
		}
	}
	if want != "" && sel == nil {
		c.Error = fmt.Sprintf("%s is not among the files story/%s changed", want, id)
	}
	if sel != nil {
		c.Selected = sel.Path
		args := []string{"diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", rv.Base + "..." + rv.Branch, "--", sel.Path}
		if sel.OldPath != "" {
			args = append(args, sel.OldPath)
		}
		out, err := git.Repo{Dir: rp.src.Root}.Raw(ctx, args...)
		if err != nil {
			c.Error = err.Error()
		}
		if len(out) > maxDiff {
			out, c.DiffTruncated = out[:maxDiff], true
		}
		for _, line := range strings.Split(strings.TrimSuffix(plainText(out), "\n"), "\n") {
			class := ""
			switch {
			case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"), strings.HasPrefix(line, "diff "), strings.HasPrefix(line, "index "):
				class = "meta"
			case strings.HasPrefix(line, "@@"):
				class = "hunk"
			case strings.HasPrefix(line, "+"):
				class = "add"
			case strings.HasPrefix(line, "-"):
				class = "del"
			}
			c.Diff = append(c.Diff, diffLine{Class: class, Text: line})
		}
	}
	p.Content = c
	s.render(w, http.StatusOK, p, func(h *hw) { h.review(p, c) })
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
