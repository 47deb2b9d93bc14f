package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/saga-ai/saga-lsp/store"
)

// What became of a review task, as its reply says
// (docs/review.md#what-goes-out-the-replies).
const (
	// ResultDone: the task completed with a change (a commit); a thread is
	// resolved.
	ResultDone = "done"
	// ResultAnswered: the task completed without a change (a question); the
	// agent's answer is quoted and the thread stays open.
	ResultAnswered = "answered"
	// ResultNotDone: the task could not be done; Why says why and the thread
	// stays open.
	ResultNotDone = "not-done"
)

// MaxQuote bounds each quote of a reply (the agent's answer, the reason
// why not) in bytes; a longer text is cut at a character boundary and the
// cut said.
const MaxQuote = 4 << 10

// maxListed bounds the files and checks a reply names.
const maxListed = 50

// Outcome is what became of one review task in a round: what its reply
// says.
type Outcome struct {
	TaskID string
	// Source is the task's review object: which thread, review or comment
	// it answers, and its revision (UpdatedAt).
	Source *store.ReviewSource
	Result string // ResultDone, ResultAnswered or ResultNotDone
	Commit string // the commit that did it (ResultDone)
	Files  []string
	Checks []string // the checks that passed
	// Answer is the agent's own words (its final message): quoted, bounded
	// and neutralised, never as saga-lsp's.
	Answer string
	Why    string // why it could not be done (ResultNotDone)
}

// Revision names the reply of o: one per task revision, as the run
// record's Replied lists them ("<task>@<updatedAt>").
func (o Outcome) Revision() string {
	if o.Source == nil {
		return o.TaskID + "@"
	}
	return o.TaskID + "@" + o.Source.UpdatedAt
}

// The patterns below check a length apart from the characters: a bounded
// repetition ({1,100}) compiles to a copy of its class per count, 285 KB
// and 2.7 ms at every start of the binary, which every CLI call pays.
var (
	markerChars = regexp.MustCompile(`^[A-Za-z0-9._:+-]+$`)
	hexChars    = regexp.MustCompile(`^[0-9a-f]+$`)
	// markerLine reads a reply's hidden first line.
	markerLine = regexp.MustCompile(`^` + regexp.QuoteMeta(ReplyMarker) + ` task=(\S+) rev=(\S+) -->`)
	repoChars  = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// markerToken tells what a reply's hidden line may carry: a task id and an
// RFC 3339 time never close the HTML comment.
func markerToken(s string) bool { return len(s) <= 100 && markerChars.MatchString(s) }

// commitHex tells a commit id, abbreviated or whole.
func commitHex(s string) bool { return len(s) >= 7 && len(s) <= 64 && hexChars.MatchString(s) }

// repoPart tells an owner's or repository's name as GitHub allows it: safe
// in a REST path.
func repoPart(s string) bool { return len(s) <= 100 && repoChars.MatchString(s) }

func (o Outcome) check() error {
	switch {
	case o.Source == nil:
		return fmt.Errorf("task %q has no review source", o.TaskID)
	case !markerToken(o.TaskID) || !markerToken(o.Source.UpdatedAt):
		return fmt.Errorf("task %q (revision %q): not a task id and time a reply can carry", o.TaskID, o.Source.UpdatedAt)
	case o.Result != ResultDone && o.Result != ResultAnswered && o.Result != ResultNotDone:
		return fmt.Errorf("task %s: result %q is none of %s, %s, %s", o.TaskID, o.Result, ResultDone, ResultAnswered, ResultNotDone)
	case o.Result == ResultDone && !commitHex(o.Commit):
		return fmt.Errorf("task %s is done but names no commit (%q)", o.TaskID, o.Commit)
	}
	return nil
}

// ReplyBody is the reply to o, in saga-lsp's own template: a hidden first
// line (ReplyMarker, the task and its revision) that makes it recognisable
// as saga-lsp's, whoever's gh posts it; what became of the task; the
// commit, the files changed and the checks that passed; and the agent's
// words only as a quote of at most MaxQuote bytes, inside a code block in
// a block quote — no line of it begins with `/` (what bots read as a
// command) and GitHub notifies no @mention inside code.
func ReplyBody(o Outcome) string {
	var b strings.Builder
	rev, key, kind, url := "", "", "", ""
	if o.Source != nil {
		rev, key, kind, url = o.Source.UpdatedAt, o.Source.Key, o.Source.Kind, o.Source.URL
	}
	fmt.Fprintf(&b, "%s task=%s rev=%s -->\n", ReplyMarker, token(o.TaskID), token(rev))
	if kind != KindThread {
		if strings.HasPrefix(url, "https://") && !strings.ContainsFunc(url, unicode.IsSpace) {
			fmt.Fprintf(&b, "In answer to %s\n\n", url)
		} else {
			fmt.Fprintf(&b, "In answer to %s\n\n", codeSpan(key))
		}
	}
	task := codeSpan(o.TaskID)
	switch o.Result {
	case ResultDone:
		commit := "(no commit recorded)"
		if commitHex(o.Commit) {
			commit = o.Commit
		}
		fmt.Fprintf(&b, "**Done** by saga-lsp in %s (task %s).\n\n", commit, task)
	case ResultAnswered:
		fmt.Fprintf(&b, "**Answered** by saga-lsp without a change (task %s). Left open for you to resolve.\n\n", task)
	default:
		fmt.Fprintf(&b, "**Not done**: saga-lsp could not do this (task %s). Left open.\n\n", task)
	}
	if len(o.Files) > 0 {
		fmt.Fprintf(&b, "- Files changed: %s\n", list(o.Files))
	}
	if len(o.Checks) > 0 {
		fmt.Fprintf(&b, "- Checks passed: %s\n", list(o.Checks))
	}
	if len(o.Files)+len(o.Checks) > 0 {
		b.WriteString("\n")
	}
	if o.Result == ResultNotDone && strings.TrimSpace(o.Why) != "" {
		b.WriteString("Why:\n\n" + quote(o.Why, MaxQuote) + "\n")
	}
	if strings.TrimSpace(o.Answer) != "" {
		b.WriteString("The agent's words, quoted:\n\n" + quote(o.Answer, MaxQuote))
	}
	return b.String()
}

// token is s as a marker may carry it; anything else is left out.
func token(s string) string {
	if markerToken(s) {
		return s
	}
	return "-"
}

// list names items as code spans, at most maxListed of them.
func list(items []string) string {
	var parts []string
	for i, it := range items {
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(items)-i))
			break
		}
		parts = append(parts, codeSpan(clip(it, 200)))
	}
	return strings.Join(parts, ", ")
}

// codeSpan is s as inline code: a backtick run longer than any inside it,
// control characters (a line break would end the span) replaced.
func codeSpan(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	fence := strings.Repeat("`", longestRun(s)+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// quote is text as a code block inside a block quote: each line starts
// with "> ", and the fence is longer than any backtick run of the text, so
// that nothing in it is markdown, a mention or a command. At most bound
// bytes are quoted, cut at a character boundary, and the cut is said.
func quote(text string, bound int) string {
	text = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(text)
	more := 0
	if len(text) > bound {
		cut := bound
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		more, text = len(text)-cut, text[:cut]
	}
	text = strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(text, "\uFFFD"))
	fence := strings.Repeat("`", max(3, longestRun(text)+1))
	var b strings.Builder
	b.WriteString("> " + fence + "text\n")
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString("> " + line + "\n")
	}
	b.WriteString("> " + fence + "\n")
	if more > 0 {
		fmt.Fprintf(&b, "\n(%d bytes more not shown: saga-lsp quotes at most %d.)\n", more, bound)
	}
	return b.String()
}

func longestRun(s string) int {
	most, n := 0, 0
	for _, r := range s {
		if r == '`' {
			n++
			most = max(most, n)
		} else {
			n = 0
		}
	}
	return most
}

// Posted is what Post did, by task revision ("<task>@<updatedAt>").
type Posted struct {
	Replied  []string // replies posted now
	Present  []string // replies already on GitHub: not posted again
	Resolved []string // threads resolved now, by key
	// Held are replies not posted, with why ("<task>@<rev>: why"): where
	// saga-lsp cannot see whether it answered already, or nothing to answer
	// on GitHub.
	Held []string
}

// Answered are the task revisions answered on GitHub: the run record's
// Replied.
func (p Posted) Answered() []string { return append(slices.Clone(p.Replied), p.Present...) }

// Post answers each outcome on pr, through gh in dir: a thread gets a reply
// on it (addPullRequestReviewThreadReply), a review or PR comment a comment
// on the PR naming it (addComment); a thread done is resolved too, one
// answered or not done stays open. The PR is read again first, and a reply
// whose hidden line (task and revision) is already among its comments, or
// pr's, is not posted again: never two replies for one task revision,
// however often Post runs or fails. Each refusal is an error naming its
// thread or comment; the other outcomes are still posted.
func Post(ctx context.Context, gh, dir string, repo Repo, pr *PR, outs []Outcome) (Posted, error) {
	var done Posted
	for _, o := range outs {
		if err := o.check(); err != nil {
			return done, fmt.Errorf("reply to %s/%s#%d: %w", repo.Owner, repo.Name, repo.Number, err)
		}
	}
	if len(outs) == 0 {
		return done, nil
	}
	fresh, err := Read(ctx, gh, dir, repo)
	if err != nil {
		return done, fmt.Errorf("reply: %w", err)
	}
	seen := replies(fresh)
	if pr != nil {
		for k := range replies(pr) {
			seen[k] = true
		}
	}
	threads := map[string]Thread{}
	for _, t := range fresh.Threads {
		threads[t.ID] = t
	}
	var errs []error
	for _, o := range outs {
		rev, key, kind := o.Revision(), o.Source.Key, o.Source.Kind
		where := fmt.Sprintf("the %s %s (task %s)", kind, key, o.TaskID)
		posted := false
		if seen[rev] {
			done.Present = append(done.Present, rev)
		} else {
			if why := blind(fresh, threads, o); why != "" {
				done.Held = append(done.Held, rev+": "+why)
				continue
			}
			if err := reply(ctx, gh, dir, fresh, o); err != nil {
				errs = append(errs, fmt.Errorf("reply on %s: %w", where, err))
				continue
			}
			seen[rev], posted = true, true
			done.Replied = append(done.Replied, rev)
		}
		if o.Result != ResultDone || kind != KindThread {
			continue
		}
		t, ok := threads[key]
		// Resolved once: after the reply posted now, or after one a failed
		// round left with no word since (a reviewer's later word reopens
		// the request as a new revision).
		if (ok && t.Resolved) || (!posted && !(ok && lastIs(t, rev))) {
			continue
		}
		if err := resolve(ctx, gh, dir, key); err != nil {
			errs = append(errs, fmt.Errorf("resolve %s: %w", where, err))
			continue
		}
		done.Resolved = append(done.Resolved, key)
	}
	return done, errors.Join(errs...)
}

// replies are the task revisions answered among pr's comments.
func replies(pr *PR) map[string]bool {
	out := map[string]bool{}
	add := func(body string) {
		if m := markerLine.FindStringSubmatch(strings.TrimLeft(body, " \t\r\n")); m != nil {
			out[m[1]+"@"+m[2]] = true
		}
	}
	for _, t := range pr.Threads {
		for _, c := range t.Comments {
			add(c.Body)
		}
	}
	for _, c := range pr.Comments {
		add(c.Body)
	}
	return out
}

// lastIs reports whether t's last comment is the reply to rev.
func lastIs(t Thread, rev string) bool {
	if len(t.Comments) == 0 {
		return false
	}
	m := markerLine.FindStringSubmatch(strings.TrimLeft(t.Comments[len(t.Comments)-1].Body, " \t\r\n"))
	return m != nil && m[1]+"@"+m[2] == rev
}

// blind says why a reply cannot be posted without risking a second one
// (saga-lsp cannot see past GitHub's first page of a list), or that there
// is nothing to answer on GitHub; "" when it can be posted.
func blind(pr *PR, threads map[string]Thread, o Outcome) string {
	switch o.Source.Kind {
	case KindThread:
		t, ok := threads[o.Source.Key]
		switch {
		case ok && t.More:
			return "the thread has over 100 comments: whether it was answered cannot be seen"
		case !ok && slices.Contains(pr.Truncated, "review threads"):
			return "the PR has over 100 threads: whether this one was answered cannot be seen"
		}
	case KindReview, KindComment:
		if slices.Contains(pr.Truncated, "comments") {
			return "the PR has over 100 comments: whether this was answered cannot be seen"
		}
	default:
		return fmt.Sprintf("a %s request has nothing to answer on GitHub", o.Source.Kind)
	}
	return ""
}

// reply posts o's reply: on its thread, or as a comment on the PR.
func reply(ctx context.Context, gh, dir string, pr *PR, o Outcome) error {
	body := ReplyBody(o)
	if o.Source.Kind == KindThread {
		out, err := ghAPI(ctx, gh, dir, "graphql", "-f", "query="+replyMutation, "-f", "thread="+o.Source.Key, "-f", "body="+body)
		if err != nil {
			return err
		}
		var a struct {
			Data struct {
				Reply *struct {
					Comment *struct{ ID string } `json:"comment"`
				} `json:"addPullRequestReviewThreadReply"`
			} `json:"data"`
		}
		if err := json.Unmarshal(out, &a); err != nil || a.Data.Reply == nil || a.Data.Reply.Comment == nil {
			return fmt.Errorf("GitHub answered no reply: %.200s", out)
		}
		return nil
	}
	out, err := ghAPI(ctx, gh, dir, "graphql", "-f", "query="+commentMutation, "-f", "subject="+pr.ID, "-f", "body="+body)
	if err != nil {
		return err
	}
	var a struct {
		Data struct {
			Comment *struct {
				Edge *struct {
					Node *struct{ ID string } `json:"node"`
				} `json:"commentEdge"`
			} `json:"addComment"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &a); err != nil || a.Data.Comment == nil || a.Data.Comment.Edge == nil || a.Data.Comment.Edge.Node == nil {
		return fmt.Errorf("GitHub answered no comment: %.200s", out)
	}
	return nil
}

func resolve(ctx context.Context, gh, dir, thread string) error {
	out, err := ghAPI(ctx, gh, dir, "graphql", "-f", "query="+resolveMutation, "-f", "thread="+thread)
	if err != nil {
		return err
	}
	var a struct {
		Data struct {
			Resolve *struct {
				Thread *struct {
					IsResolved bool `json:"isResolved"`
				} `json:"thread"`
			} `json:"resolveReviewThread"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &a); err != nil || a.Data.Resolve == nil || a.Data.Resolve.Thread == nil || !a.Data.Resolve.Thread.IsResolved {
		return fmt.Errorf("GitHub did not resolve it: %.200s", out)
	}
	return nil
}

// RequestAgain asks GitHub for a review again from logins (the writers who
// asked for changes), through gh in dir: REST `POST
// repos/{owner}/{repo}/pulls/{n}/requested_reviewers` with reviewers[]. A
// login GitHub would not take as one is refused before anything is sent.
func RequestAgain(ctx context.Context, gh, dir string, repo Repo, logins []string) error {
	if !repoPart(repo.Owner) || !repoPart(repo.Name) || repo.Number <= 0 {
		return fmt.Errorf("request a review again: %q/%q#%d is not a pull request", repo.Owner, repo.Name, repo.Number)
	}
	args := []string{"-X", "POST", fmt.Sprintf("repos/%s/%s/pulls/%s/requested_reviewers", repo.Owner, repo.Name, strconv.Itoa(repo.Number))}
	var asked []string
	for _, l := range logins {
		if !validLogin(l) {
			return fmt.Errorf("request a review again on %s/%s#%d: %q is not a GitHub login", repo.Owner, repo.Name, repo.Number, l)
		}
		if !slices.Contains(asked, l) {
			asked = append(asked, l)
			args = append(args, "-f", "reviewers[]="+l)
		}
	}
	if len(asked) == 0 {
		return nil
	}
	if _, err := ghAPI(ctx, gh, dir, args...); err != nil {
		return fmt.Errorf("request a review again from %s on %s/%s#%d: %w", strings.Join(asked, ", "), repo.Owner, repo.Name, repo.Number, err)
	}
	return nil
}
