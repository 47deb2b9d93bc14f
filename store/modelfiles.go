package store

import (
	"os"
	"path/filepath"
	"strings"
)

// IsModelFile tells whether rel (slash-separated, from the root) is a file
// the workspace model holds.
func IsModelFile(rel string) bool {
	kind, _, _ := Classify(rel)
	return kind != KindOther
}

// ListModelFiles lists the model files under a .saga folder rel of root,
// as slash-separated paths from root: a few levels at most (the layout is
// fixed; a worktree copy's folder is one level), symbolic links to folders
// not followed. For the file watchers of the language server and the
// dashboard, which re-list a folder that appeared or changed.
func ListModelFiles(root, rel string) []string {
	var out []string
	var walk func(rel string, depth int)
	walk = func(rel string, depth int) {
		des, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return
		}
		for _, de := range des {
			child := rel + "/" + de.Name()
			if IsModelFile(child) {
				out = append(out, child)
			} else if de.IsDir() && depth < 3 {
				walk(child, depth+1)
			}
		}
	}
	walk(rel, strings.Count(rel, "/"))
	return out
}
