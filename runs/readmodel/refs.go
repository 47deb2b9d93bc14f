package readmodel

import (
	"context"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
)

// storyRefs are a repository's story and dry branches, local and origin's,
// as one listing found them, and the local story branches' history not in
// HEAD once read: what an Evidence asks git, apart from the branches'
// files, in two processes.
type storyRefs struct {
	refs     map[string]bool   // full ref names of story and dry branches, local and origin's
	tips     map[string]string // the same refs' commits
	refsRead bool              // the refs were listed (a failed listing names no branch gone)

	unmerged map[string][]string // the local story branches' commits not in HEAD, with their parents
	graphErr error               // why unmerged could not be read: each question asks git
	graphed  bool
}

// listStoryRefs lists the story refs of the repository at root.
func listStoryRefs(ctx context.Context, root string) storyRefs {
	r := storyRefs{refs: map[string]bool{}, tips: map[string]string{}}
	out, err := git.Repo{Dir: root}.Run(ctx, "for-each-ref", "--format=%(objectname) %(refname)",
		"refs/heads/"+runs.StoryBranchPrefix, "refs/heads/"+runs.DryBranchPrefix, "refs/remotes/origin/"+runs.StoryBranchPrefix)
	if err != nil {
		return r
	}
	r.refsRead = true
	for line := range strings.Lines(out) {
		if sha, name, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			r.refs[name], r.tips[name] = true, sha
		}
	}
	return r
}

// readGraph reads the local story branches' history not in HEAD (one git
// process, once; none without a local story branch).
func (r *storyRefs) readGraph(ctx context.Context, root string) {
	if r.graphed {
		return
	}
	r.graphed = true
	var tips []string
	seen := map[string]bool{}
	for name, sha := range r.tips {
		if strings.HasPrefix(name, "refs/heads/"+runs.StoryBranchPrefix) && !seen[sha] {
			seen[sha] = true
			tips = append(tips, sha)
		}
	}
	r.unmerged, r.graphErr = git.Repo{Dir: root}.CommitsNotIn(ctx, tips, "HEAD")
}
