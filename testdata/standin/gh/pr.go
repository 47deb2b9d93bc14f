package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The pr subcommands: list, create, ready, edit, view, and finding one PR.

// ---- pr list ----

func (g *gh) prList(args []string) error {
	f, err := parseFlags("pr list", args,
		flagSpec{long: "head", short: "H", value: true}, flagSpec{long: "base", short: "B", value: true},
		flagSpec{long: "state", short: "s", value: true}, flagSpec{long: "json", value: true},
		flagSpec{long: "limit", short: "L", value: true}, flagSpec{long: "draft", short: "d"},
		flagSpec{long: "repo", short: "R", value: true}, flagSpec{long: "jq", short: "q", value: true},
		flagSpec{long: "template", short: "t", value: true})
	if err != nil {
		return err
	}
	if f.set["jq"] || f.set["template"] {
		return fail(1, "gh stand-in: --jq/--template are not simulated")
	}
	if len(f.positional) > 0 {
		return fail(1, "unknown argument %q for \"gh pr list\"", f.positional[0])
	}
	stateFilter := "open"
	if f.set["state"] {
		stateFilter = f.vals["state"]
	}
	if !slices.Contains([]string{"open", "closed", "merged", "all"}, stateFilter) {
		return fail(1, "invalid argument %q for \"-s, --state\" flag: valid values are {open|closed|merged|all}", stateFilter)
	}
	limit := 30
	if f.set["limit"] {
		n, err := strconv.Atoi(f.vals["limit"])
		if err != nil {
			return fail(1, "invalid argument %q for \"-L, --limit\" flag: strconv.ParseInt: parsing %q: invalid syntax", f.vals["limit"], f.vals["limit"])
		}
		if n < 1 {
			return fail(1, "invalid value for --limit: %d", n)
		}
		limit = n
	}
	fields, err := jsonFieldsOf(f)
	if err != nil {
		return err
	}
	repo, err := g.authRepo(f)
	if err != nil {
		return err
	}
	head := f.vals["head"]
	if _, b, ok := strings.Cut(head, ":"); ok {
		head = b
	}
	var found []*pr
	err = g.withState(func(st *state) (bool, error) {
		for _, p := range inRepo(st, repo) {
			if head != "" && p.HeadRefName != head {
				continue
			}
			if f.vals["base"] != "" && p.BaseRefName != f.vals["base"] {
				continue
			}
			if f.set["draft"] && f.vals["draft"] == "true" && !p.IsDraft {
				continue
			}
			if stateFilter != "all" && !strings.EqualFold(p.State, stateFilter) {
				continue
			}
			found = append(found, p)
			if len(found) == limit {
				break
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	if fields != nil {
		out := []map[string]any{}
		for _, p := range found {
			out = append(out, p.export(fields))
		}
		return g.writeJSON(out)
	}
	for _, p := range found {
		st := p.State
		if st == "OPEN" && p.IsDraft {
			st = "DRAFT"
		}
		fmt.Fprintf(g.stdout, "%d\t%s\t%s\t%s\t%s\n", p.Number, p.Title, p.HeadRefName, st, p.CreatedAt)
	}
	return nil
}

// ---- pr create ----

func (g *gh) prCreate(args []string) error {
	f, err := parseFlags("pr create", args,
		flagSpec{long: "draft", short: "d"}, flagSpec{long: "title", short: "t", value: true},
		flagSpec{long: "body", short: "b", value: true}, flagSpec{long: "base", short: "B", value: true},
		flagSpec{long: "head", short: "H", value: true}, flagSpec{long: "repo", short: "R", value: true},
		flagSpec{long: "fill", short: "f"})
	if err != nil {
		return err
	}
	if len(f.positional) > 0 {
		return fail(1, "unknown argument %q for \"gh pr create\"", f.positional[0])
	}
	fill := f.vals["fill"] == "true"
	if !fill && (!f.set["title"] || !f.set["body"]) {
		return fail(1, "must provide `--title` and `--body` (or `--fill` or `fill-first` or `--fillverbose`) when not running interactively")
	}
	repo, err := g.authRepo(f)
	if err != nil {
		return err
	}
	head := f.vals["head"]
	headGiven := head != ""
	if !headGiven {
		if head, err = g.currentBranch(); err != nil {
			return err
		}
	}
	base := f.vals["base"]
	if base == "" {
		base = g.defaultBranch()
	}
	title, body := f.vals["title"], f.vals["body"]
	if fill && title == "" {
		out, _ := g.git("log", "-1", "--format=%s", head)
		title = strings.TrimSpace(out)
	}
	headSHA := g.remoteSHA(head)
	if headSHA == "" {
		if !headGiven {
			return fail(1, "aborted: you must first push the current branch to a remote, or use the --head flag")
		}
		return fail(1, "pull request create failed: GraphQL: Head sha can't be blank, Base sha can't be blank, No commits between %s and %s, Head ref must be a branch (createPullRequest)", base, head)
	}
	baseSHA := g.remoteSHA(base)
	if baseSHA == "" {
		return fail(1, "pull request create failed: GraphQL: Base ref must be a branch (createPullRequest)")
	}
	if headSHA == baseSHA {
		return fail(1, "pull request create failed: GraphQL: No commits between %s and %s (createPullRequest)", base, head)
	}
	if _, err := g.git("merge-base", "--is-ancestor", headSHA, baseSHA); err == nil {
		return fail(1, "pull request create failed: GraphQL: No commits between %s and %s (createPullRequest)", base, head)
	}
	var created *pr
	err = g.withState(func(st *state) (bool, error) {
		max := 0
		for _, p := range inRepo(st, repo) {
			if p.HeadRefName == head && p.BaseRefName == base && p.State == "OPEN" {
				return false, fail(1, "a pull request for branch %q into branch %q already exists:\n%s", head, base, p.URL)
			}
			if p.Number > max {
				max = p.Number
			}
		}
		created = &pr{Number: max + 1, HeadRefName: head, BaseRefName: base, Title: title, Body: body,
			IsDraft: f.vals["draft"] == "true", State: "OPEN", CreatedAt: time.Now().UTC().Format(time.RFC3339)}
		created.URL = prefix(repo) + strconv.Itoa(created.Number)
		st.PRs = append(st.PRs, created)
		return true, nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stdout, created.URL)
	return nil
}

// ---- finding one PR ----

var prURL = regexp.MustCompile(`^https?://[^/]+/([^/]+/[^/]+)/pull/(\d+)`)

// find resolves a number, URL or branch (empty: the current branch) to a
// pull request: for a branch, the newest open one, else the newest.
func (g *gh) find(st *state, repo, arg string) (*pr, error) {
	if arg == "" {
		b, err := g.currentBranch()
		if err != nil {
			return nil, err
		}
		arg = b
	}
	number := 0
	if m := prURL.FindStringSubmatch(arg); m != nil {
		repo = m[1]
		number, _ = strconv.Atoi(m[2])
	} else if n, err := strconv.Atoi(strings.TrimPrefix(arg, "#")); err == nil && n > 0 {
		number = n
	}
	prs := inRepo(st, repo)
	if number > 0 {
		for _, p := range prs {
			if p.Number == number {
				return p, nil
			}
		}
		return nil, fail(1, "GraphQL: Could not resolve to a PullRequest with the number of %d. (repository.pullRequest)", number)
	}
	var any *pr
	for _, p := range prs {
		if p.HeadRefName != arg {
			continue
		}
		if p.State == "OPEN" {
			return p, nil
		}
		if any == nil {
			any = p
		}
	}
	if any != nil {
		return any, nil
	}
	return nil, fail(1, "no pull requests found for branch %q", arg)
}

// ---- pr ready ----

func (g *gh) prReady(args []string) error {
	f, err := parseFlags("pr ready", args, flagSpec{long: "undo"}, flagSpec{long: "repo", short: "R", value: true})
	if err != nil {
		return err
	}
	repo, arg, err := g.prTarget(f)
	if err != nil {
		return err
	}
	undo := f.vals["undo"] == "true"
	var msg string
	err = g.withState(func(st *state) (bool, error) {
		p, err := g.find(st, repo, arg)
		if err != nil {
			return false, err
		}
		if p.State != "OPEN" {
			return false, fail(1, "Pull request #%d is %s. Only draft pull requests can be marked as \"ready for review\"", p.Number, strings.ToLower(p.State))
		}
		switch {
		case undo && p.IsDraft:
			msg = fmt.Sprintf("! Pull request #%d is already \"in draft\"", p.Number)
			return false, nil
		case undo:
			p.IsDraft = true
			msg = fmt.Sprintf("✓ Pull request #%d is converted to \"draft\"", p.Number)
			return true, nil
		case !p.IsDraft:
			msg = fmt.Sprintf("! Pull request #%d is already \"ready for review\"", p.Number)
			return false, nil
		}
		p.IsDraft = false
		msg = fmt.Sprintf("✓ Pull request #%d is marked as \"ready for review\"", p.Number)
		return true, nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stderr, msg)
	return nil
}

// prTarget is the repository and the pull request argument (a number, URL
// or branch; "" for the current branch) of pr ready/edit/view, once
// authenticated.
func (g *gh) prTarget(f *flags) (repo, arg string, err error) {
	if len(f.positional) > 1 {
		return "", "", fail(1, "accepts at most 1 arg(s), received %d", len(f.positional))
	}
	if repo, err = g.authRepo(f); err != nil {
		return "", "", err
	}
	if len(f.positional) == 1 {
		arg = f.positional[0]
	}
	return repo, arg, nil
}

// ---- pr edit ----

func (g *gh) prEdit(args []string) error {
	f, err := parseFlags("pr edit", args, flagSpec{long: "title", short: "t", value: true}, flagSpec{long: "body", short: "b", value: true},
		flagSpec{long: "base", short: "B", value: true}, flagSpec{long: "repo", short: "R", value: true})
	if err != nil {
		return err
	}
	if !f.set["title"] && !f.set["body"] && !f.set["base"] {
		return fail(1, "specify at least one field to edit (the stand-in simulates --title, --body and --base)")
	}
	repo, arg, err := g.prTarget(f)
	if err != nil {
		return err
	}
	var url string
	err = g.withState(func(st *state) (bool, error) {
		p, err := g.find(st, repo, arg)
		if err != nil {
			return false, err
		}
		if f.set["title"] {
			p.Title = f.vals["title"]
		}
		if f.set["body"] {
			p.Body = f.vals["body"]
		}
		if f.set["base"] {
			if p.State != "OPEN" {
				return false, fail(1, "GraphQL: Cannot change the base branch of a %s pull request. (updatePullRequest)", strings.ToLower(p.State))
			}
			if s := st.stackOf(repo, p.Number); s != nil {
				return false, stackRefusal(s, "changing the base branch")
			}
			p.BaseRefName = f.vals["base"]
		}
		url = p.URL
		return true, nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stdout, url)
	return nil
}

// ---- pr view ----

func (g *gh) prView(args []string) error {
	f, err := parseFlags("pr view", args, flagSpec{long: "json", value: true}, flagSpec{long: "repo", short: "R", value: true},
		flagSpec{long: "jq", short: "q", value: true}, flagSpec{long: "template", short: "t", value: true},
		flagSpec{long: "web", short: "w"}, flagSpec{long: "comments", short: "c"})
	if err != nil {
		return err
	}
	if f.set["jq"] || f.set["template"] || f.set["web"] {
		return fail(1, "gh stand-in: --jq/--template/--web are not simulated")
	}
	if len(f.positional) > 1 {
		return fail(1, "accepts at most 1 arg(s), received %d", len(f.positional))
	}
	fields, err := jsonFieldsOf(f)
	if err != nil {
		return err
	}
	repo, arg, err := g.prTarget(f)
	if err != nil {
		return err
	}
	var found *pr
	err = g.withState(func(st *state) (bool, error) {
		p, err := g.find(st, repo, arg)
		found = p
		return false, err
	})
	if err != nil {
		return err
	}
	if fields != nil {
		return g.writeJSON(found.export(fields))
	}
	st := found.State
	if st == "OPEN" && found.IsDraft {
		st = "DRAFT"
	}
	fmt.Fprintf(g.stdout, "title:\t%s\nstate:\t%s\nauthor:\t%s\nnumber:\t%d\nurl:\t%s\n--\n%s\n",
		found.Title, st, g.user(), found.Number, found.URL, found.Body)
	return nil
}

// prClose closes an open pull request (gh pr close <number|url|branch>
// [--comment text] [--delete-branch is not simulated]).
func (g *gh) prClose(args []string) error {
	f, err := parseFlags("pr close", args, flagSpec{long: "comment", short: "c", value: true}, flagSpec{long: "repo", short: "R", value: true})
	if err != nil {
		return err
	}
	repo, arg, err := g.prTarget(f)
	if err != nil {
		return err
	}
	var msg string
	err = g.withState(func(st *state) (bool, error) {
		p, err := g.find(st, repo, arg)
		if err != nil {
			return false, err
		}
		if p.State != "OPEN" {
			msg = fmt.Sprintf("! Pull request #%d (%s) is already %s", p.Number, p.Title, strings.ToLower(p.State))
			return false, nil
		}
		p.State = "CLOSED"
		msg = fmt.Sprintf("✓ Closed pull request #%d (%s)", p.Number, p.Title)
		return true, nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stderr, msg)
	return nil
}
