package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
)

// maxAnswer bounds what saga-lsp reads of one gh answer: 100 threads of 100
// comments of GitHub's 65,536-character bodies would be more, and a round
// reads only its first 64 KiB of reviewers' text anyway.
const maxAnswer = 32 << 20

// PR is a pull request's review as read in one round.
type PR struct {
	ID             string
	URL            string
	Number         int
	State          string // OPEN, CLOSED, MERGED
	HeadRefName    string
	ReviewDecision string // APPROVED, CHANGES_REQUESTED, REVIEW_REQUIRED or empty
	Threads        []Thread
	Reviews        []Review
	Comments       []Comment // the PR's own (issue) comments
	// Truncated names the lists longer than one page (their first 100 read).
	Truncated []string
}

// Thread is a review thread on a line of a file.
type Thread struct {
	ID       string
	Resolved bool
	Outdated bool
	Path     string
	Line     int
	Comments []Comment
	// More: the thread has more comments than its first 100, read.
	More bool
}

// Review is a submitted review (its body; its line comments are threads).
type Review struct {
	ID        string
	URL       string
	Body      string
	State     string // COMMENTED, APPROVED, CHANGES_REQUESTED, DISMISSED, PENDING
	UpdatedAt time.Time
	Author    Author
}

// Comment is one comment of a thread, or of the PR itself.
type Comment struct {
	ID        string
	URL       string
	Body      string
	UpdatedAt time.Time
	Minimized bool
	Author    Author
}

// Author is who wrote a comment or review. A deleted account is GitHub's
// "ghost": no login.
type Author struct {
	Login string
	Bot   bool
}

// Repo is a pull request's repository and number, from its URL.
type Repo struct {
	Owner, Name string
	Number      int
}

// RepoOfURL reads owner, name and number from a PR's URL
// (https://<host>/<owner>/<name>/pull/<number>).
func RepoOfURL(pr string) (Repo, error) {
	u, err := url.Parse(pr)
	if err != nil {
		return Repo{}, fmt.Errorf("the PR %q is not a URL: %w", pr, err)
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 4 || parts[2] != "pull" || parts[0] == "" || parts[1] == "" {
		return Repo{}, fmt.Errorf("the PR %q is not a pull request's URL (…/<owner>/<repo>/pull/<number>)", pr)
	}
	n, err := strconv.Atoi(parts[3])
	if err != nil || n <= 0 {
		return Repo{}, fmt.Errorf("the PR %q has no number", pr)
	}
	return Repo{Owner: parts[0], Name: parts[1], Number: n}, nil
}

// Read asks GitHub, through gh in dir, for a pull request's review: one
// GraphQL query.
func Read(ctx context.Context, gh, dir string, r Repo) (*PR, error) {
	out, err := ghAPI(ctx, gh, dir, "graphql", "-f", "query="+prQuery,
		"-F", "owner="+r.Owner, "-F", "name="+r.Name, "-F", "number="+strconv.Itoa(r.Number))
	if err != nil {
		return nil, fmt.Errorf("read the review of %s/%s#%d: %w", r.Owner, r.Name, r.Number, err)
	}
	pr, err := decodePR(out)
	if err != nil {
		return nil, fmt.Errorf("read the review of %s/%s#%d: %w", r.Owner, r.Name, r.Number, err)
	}
	return pr, nil
}

// The answer's shape, as prQuery asks for it.
type (
	wireAuthor struct {
		Typename string `json:"__typename"`
		Login    string `json:"login"`
	}
	wireComment struct {
		ID          string      `json:"id"`
		URL         string      `json:"url"`
		Body        string      `json:"body"`
		UpdatedAt   time.Time   `json:"updatedAt"`
		IsMinimized bool        `json:"isMinimized"`
		Author      *wireAuthor `json:"author"`
	}
	wirePage struct {
		HasNextPage bool `json:"hasNextPage"`
	}
	wireAnswer struct {
		Data struct {
			Repository *struct {
				PullRequest *struct {
					ID             string `json:"id"`
					URL            string `json:"url"`
					Number         int    `json:"number"`
					State          string `json:"state"`
					HeadRefName    string `json:"headRefName"`
					ReviewDecision string `json:"reviewDecision"`
					ReviewThreads  struct {
						PageInfo wirePage `json:"pageInfo"`
						Nodes    []struct {
							ID         string `json:"id"`
							IsResolved bool   `json:"isResolved"`
							IsOutdated bool   `json:"isOutdated"`
							Path       string `json:"path"`
							Line       *int   `json:"line"`
							Comments   struct {
								PageInfo wirePage      `json:"pageInfo"`
								Nodes    []wireComment `json:"nodes"`
							} `json:"comments"`
						} `json:"nodes"`
					} `json:"reviewThreads"`
					Reviews struct {
						PageInfo wirePage `json:"pageInfo"`
						Nodes    []struct {
							ID        string      `json:"id"`
							URL       string      `json:"url"`
							Body      string      `json:"body"`
							State     string      `json:"state"`
							UpdatedAt time.Time   `json:"updatedAt"`
							Author    *wireAuthor `json:"author"`
						} `json:"nodes"`
					} `json:"reviews"`
					Comments struct {
						PageInfo wirePage      `json:"pageInfo"`
						Nodes    []wireComment `json:"nodes"`
					} `json:"comments"`
				} `json:"pullRequest"`
			} `json:"repository"`
		} `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
)

func decodePR(out []byte) (*PR, error) {
	var w wireAnswer
	if err := json.Unmarshal(out, &w); err != nil {
		return nil, fmt.Errorf("gh printed what is not GitHub's answer: %w", err)
	}
	if len(w.Errors) > 0 {
		return nil, fmt.Errorf("GitHub: %s", w.Errors[0].Message)
	}
	if w.Data.Repository == nil || w.Data.Repository.PullRequest == nil {
		return nil, errors.New("GitHub has no such pull request")
	}
	p := w.Data.Repository.PullRequest
	pr := &PR{ID: p.ID, URL: p.URL, Number: p.Number, State: p.State, HeadRefName: p.HeadRefName, ReviewDecision: p.ReviewDecision}
	page := func(name string, pg wirePage) {
		if pg.HasNextPage {
			pr.Truncated = append(pr.Truncated, name)
		}
	}
	page("review threads", p.ReviewThreads.PageInfo)
	page("reviews", p.Reviews.PageInfo)
	page("comments", p.Comments.PageInfo)
	for _, t := range p.ReviewThreads.Nodes {
		th := Thread{ID: t.ID, Resolved: t.IsResolved, Outdated: t.IsOutdated, Path: t.Path, More: t.Comments.PageInfo.HasNextPage}
		if t.Line != nil {
			th.Line = *t.Line
		}
		page("comments of the thread on "+t.Path, t.Comments.PageInfo)
		for _, c := range t.Comments.Nodes {
			th.Comments = append(th.Comments, comment(c))
		}
		pr.Threads = append(pr.Threads, th)
	}
	for _, r := range p.Reviews.Nodes {
		pr.Reviews = append(pr.Reviews, Review{ID: r.ID, URL: r.URL, Body: r.Body, State: r.State, UpdatedAt: r.UpdatedAt, Author: author(r.Author)})
	}
	for _, c := range p.Comments.Nodes {
		pr.Comments = append(pr.Comments, comment(c))
	}
	return pr, nil
}

func comment(c wireComment) Comment {
	return Comment{ID: c.ID, URL: c.URL, Body: c.Body, UpdatedAt: c.UpdatedAt, Minimized: c.IsMinimized, Author: author(c.Author)}
}

func author(a *wireAuthor) Author {
	if a == nil {
		return Author{}
	}
	// GitHub Apps are Bot actors; a "[bot]" login is one too, whatever
	// type an older API reports.
	return Author{Login: a.Login, Bot: a.Typename == "Bot" || strings.HasSuffix(a.Login, "[bot]")}
}

// ghAPI runs `gh api <args…>` in dir and returns its stdout, bounded; an
// error carries gh's message.
func ghAPI(ctx context.Context, gh, dir string, args ...string) ([]byte, error) {
	return runs.GHOutput(ctx, gh, dir, maxAnswer, append([]string{"api"}, args...)...)
}
