package git

import (
	"context"
	"strings"
)

// Refs are a repository's refs as one for-each-ref listed them: what a
// sequence of "does this branch exist" probes asks, in one process
// (docs/architecture.md#an-epic-of-200-stories: a story's start on loaded
// cores paid a process a probe).
type Refs struct {
	Tips map[string]string // full ref name → its commit
	Head string            // the full name of the branch HEAD names, when it is one of those listed; else ""
}

// ListRefs lists the refs under patterns (for-each-ref's: "refs/heads/"),
// and which of them HEAD names.
func (g Repo) ListRefs(ctx context.Context, patterns ...string) (Refs, error) {
	r := Refs{Tips: map[string]string{}}
	// Raw: a line's leading blanks are its mark.
	out, err := g.Raw(ctx, append([]string{"for-each-ref", "--format=%(HEAD) %(objectname) %(refname)"}, patterns...)...)
	if err != nil {
		return r, err
	}
	for line := range strings.Lines(out) {
		// "* <sha> <ref>" for HEAD's branch, "  <sha> <ref>" for the rest.
		mark, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		sha, name, ok := strings.Cut(strings.TrimSpace(rest), " ")
		if !ok {
			continue
		}
		if mark == "*" {
			r.Head = name
		}
		r.Tips[name] = sha
	}
	return r, nil
}

// Has reports whether ref (a full name) was listed.
func (r Refs) Has(ref string) bool {
	_, ok := r.Tips[ref]
	return ok
}

// HeadBranch is the short name of the branch HEAD names ("main"), or ""
// when HEAD is detached or its branch was not listed.
func (r Refs) HeadBranch() string {
	return strings.TrimPrefix(r.Head, "refs/heads/")
}
