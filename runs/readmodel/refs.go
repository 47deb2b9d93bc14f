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
	head     string            // HEAD's commit when HEAD is a local branch, as listed with them; else ""

	unmerged map[string][]string // the local story branches' commits not in HEAD, with their parents
	graphErr error               // why unmerged could not be read: each question asks git
	graphed  bool
}

// listStoryRefs lists the story refs of the repository at root, and
// HEAD's commit: every local branch is listed, so that the one HEAD names
// comes with the story branches in the same process
// (BranchFolders.unmergedGraph keeps the history by it).
func listStoryRefs(ctx context.Context, root string) storyRefs {
	r := storyRefs{refs: map[string]bool{}, tips: map[string]string{}}
	listed, err := git.Repo{Dir: root}.ListRefs(ctx, "refs/heads/", "refs/remotes/origin/"+runs.StoryBranchPrefix)
	if err != nil {
		return r
	}
	r.refsRead = true
	r.head = listed.Tips[listed.Head]
	for name, sha := range listed.Tips {
		for _, prefix := range []string{"refs/heads/" + runs.StoryBranchPrefix, "refs/heads/" + runs.DryBranchPrefix, "refs/remotes/origin/" + runs.StoryBranchPrefix} {
			if strings.HasPrefix(name, prefix) {
				r.refs[name], r.tips[name] = true, sha
			}
		}
	}
	return r
}

// readGraph reads the local story branches' history not in HEAD, once:
// through kept, the part a tip that moved added (BranchFolders.unmergedGraph);
// a git process at most, none without a local story branch.
func (r *storyRefs) readGraph(ctx context.Context, root string, kept *BranchFolders) {
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
	r.unmerged, r.graphErr = kept.unmergedGraph(ctx, root, r.head, tips)
}
