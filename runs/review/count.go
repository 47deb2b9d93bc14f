package review

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
)

// ReplyMarker starts the hidden line of every reply saga-lsp posts: a
// comment carrying it is saga-lsp's own and never a request, whoever's gh
// posted it.
const ReplyMarker = "<!-- saga-lsp reply"

// loginChars is GitHub's rule for a login's characters (its length
// checked apart, as answer.go's patterns are).
var loginChars = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*$`)

// validLogin is GitHub's rule for a login; anything else is never put in a
// REST path.
func validLogin(s string) bool { return len(s) <= 39 && loginChars.MatchString(s) }

// Writers answers whether GitHub says a login can write to the repository
// (the collaborator-permission endpoint: admin or write, which includes
// maintain and custom roles built on write). `author_association` is not a
// permission and is never read. Each login is asked once per round.
type Writers struct {
	gh, dir string
	repo    Repo
	known   map[string]bool
}

// NewWriters is a round's permission cache for repo, asking through gh in dir.
func NewWriters(gh, dir string, repo Repo) *Writers {
	return &Writers{gh: gh, dir: dir, repo: repo, known: map[string]bool{}}
}

// Can reports whether login may write to the repository. A login GitHub
// does not know as a collaborator cannot; any other failure (rate limits,
// the network) is an error: the round stops rather than guess.
func (w *Writers) Can(ctx context.Context, login string) (bool, error) {
	if v, ok := w.known[login]; ok {
		return v, nil
	}
	if !validLogin(login) {
		w.known[login] = false
		return false, nil
	}
	out, err := ghAPI(ctx, w.gh, w.dir, fmt.Sprintf("repos/%s/%s/collaborators/%s/permission", w.repo.Owner, w.repo.Name, login))
	if err != nil {
		if strings.Contains(err.Error(), "(HTTP 404)") {
			w.known[login] = false
			return false, nil
		}
		return false, fmt.Errorf("ask GitHub whether %s can write to %s/%s: %w", login, w.repo.Owner, w.repo.Name, err)
	}
	var p struct {
		Permission string `json:"permission"`
	}
	if err := json.Unmarshal(out, &p); err != nil {
		return false, fmt.Errorf("ask GitHub whether %s can write to %s/%s: gh printed what is not a permission: %w", login, w.repo.Owner, w.repo.Name, err)
	}
	can := p.Permission == "admin" || p.Permission == "write"
	w.known[login] = can
	return can, nil
}

// Kinds of request, as a review task's source names them.
const (
	KindThread  = "thread"
	KindReview  = "review"
	KindComment = "comment"
	KindEditor  = "editor" // a comment made in the editor's review (editor.go)
)

// Request is one thread, review or PR comment that counts: the words of
// the writers in it, in order.
type Request struct {
	Key       string // GitHub's node id of the thread, review or comment
	Kind      string
	URL       string
	Path      string
	Line      int
	Quotes    []Quote
	UpdatedAt time.Time // the newest counted comment's
	// ChangesRequested: a review in state CHANGES_REQUESTED (what starts a
	// round on its own under --watch).
	ChangesRequested bool
}

// Quote is a counted comment.
type Quote struct {
	Author    string
	Body      string
	URL       string
	UpdatedAt time.Time
}

// Checks are the commands a writer named in the request (`check: <command>`
// lines), in order, once each.
func (r Request) Checks() []string {
	var out []string
	for _, q := range r.Quotes {
		for _, line := range strings.Split(q.Body, "\n") {
			cmd, ok := strings.CutPrefix(strings.TrimSpace(line), "check:")
			if cmd = strings.TrimSpace(cmd); ok && cmd != "" && !slices.Contains(out, cmd) {
				out = append(out, cmd)
			}
		}
	}
	return out
}

// Round is what one read of a PR's review asks of the story.
type Round struct {
	Requests []Request // every counted request, oldest first
	// Open holds the keys of every request still to be answered; a review
	// task whose key is not there (its comments deleted or minimized, its
	// thread resolved, its review dismissed) is cancelled if not yet done.
	Open    map[string]bool
	Ignored runs.ReviewIgnored
}

// Count decides, comment by comment, what of pr counts: a comment counts
// when its author is not a bot, can write to the repository, and the comment
// is neither minimized nor one of saga-lsp's own replies. A thread counts
// when one of its comments does (only those comments are quoted); a review
// when it requests changes or comments with a body; a PR comment on its own.
// Resolved threads and approving or dismissed reviews ask nothing.
func Count(ctx context.Context, pr *PR, w *Writers) (Round, error) {
	rd := Round{Open: map[string]bool{}}
	counts := func(a Author, minimized bool, body string) (bool, error) {
		switch {
		case strings.HasPrefix(strings.TrimSpace(body), ReplyMarker):
			return false, nil
		case a.Bot:
			rd.Ignored.Bots++
			return false, nil
		case minimized:
			rd.Ignored.Hidden++
			return false, nil
		case a.Login == "":
			rd.Ignored.NonWriters++
			return false, nil
		}
		ok, err := w.Can(ctx, a.Login)
		if err == nil && !ok {
			rd.Ignored.NonWriters++
		}
		return ok, err
	}
	for _, t := range pr.Threads {
		if t.Resolved {
			continue
		}
		req := Request{Key: t.ID, Kind: KindThread, Path: t.Path, Line: t.Line}
		for _, c := range t.Comments {
			ok, err := counts(c.Author, c.Minimized, c.Body)
			if err != nil {
				return Round{}, err
			}
			if ok {
				req.add(c)
			}
		}
		rd.keep(req)
	}
	for _, r := range pr.Reviews {
		if (r.State != "CHANGES_REQUESTED" && r.State != "COMMENTED") || strings.TrimSpace(r.Body) == "" {
			continue
		}
		ok, err := counts(r.Author, false, r.Body)
		if err != nil {
			return Round{}, err
		}
		if ok {
			req := Request{Key: r.ID, Kind: KindReview, ChangesRequested: r.State == "CHANGES_REQUESTED"}
			req.add(Comment{URL: r.URL, Body: r.Body, UpdatedAt: r.UpdatedAt, Author: r.Author})
			rd.keep(req)
		}
	}
	for _, c := range pr.Comments {
		ok, err := counts(c.Author, c.Minimized, c.Body)
		if err != nil {
			return Round{}, err
		}
		if ok {
			req := Request{Key: c.ID, Kind: KindComment}
			req.add(c)
			rd.keep(req)
		}
	}
	slices.SortStableFunc(rd.Requests, func(a, b Request) int { return a.Quotes[0].UpdatedAt.Compare(b.Quotes[0].UpdatedAt) })
	return rd, nil
}

func (r *Request) add(c Comment) {
	if r.URL == "" {
		r.URL = c.URL
	}
	r.Quotes = append(r.Quotes, Quote{Author: c.Author.Login, Body: c.Body, URL: c.URL, UpdatedAt: c.UpdatedAt})
	if c.UpdatedAt.After(r.UpdatedAt) {
		r.UpdatedAt = c.UpdatedAt
	}
}

func (rd *Round) keep(r Request) {
	if len(r.Quotes) == 0 {
		return
	}
	rd.Requests = append(rd.Requests, r)
	rd.Open[r.Key] = true
}
