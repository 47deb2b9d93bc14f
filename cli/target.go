package cli

import (
	"fmt"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/runs"
)

// targetFlags are --epic and --story: what a name means when it is both an
// epic and a story.
type targetFlags struct{ epic, story *bool }

func addTargetFlags(c *cmdLine) targetFlags {
	return targetFlags{
		epic:  c.Bool("epic", false, "the name is an epic's (when a story has the same name)"),
		story: c.Bool("story", false, "the name is a story's (when an epic has the same name)"),
	}
}

// resolve tells whether name is a story or an epic of the workspace. A name
// that is both, without --epic or --story, is a usage error; a name that
// is neither is taken as a story (the command then says it does not
// exist).
func (t targetFlags) resolve(root, name string) (runs.Kind, error) {
	if *t.epic && *t.story {
		return "", usagef("--epic and --story exclude each other")
	}
	switch {
	case *t.epic:
		return runs.KindEpic, nil
	case *t.story:
		return runs.KindStory, nil
	}
	p, err := store.NewParser()
	if err != nil {
		return "", err
	}
	ws, err := p.Load(root)
	if err != nil {
		return "", err
	}
	isStory, isEpic := ws.Story(name) != nil, ws.Epic(name) != nil
	switch {
	case isStory && isEpic:
		return "", usagef("%q is both a story and an epic: pass --story or --epic", name)
	case isEpic:
		return runs.KindEpic, nil
	}
	return runs.KindStory, nil
}

// epicState is the status of an epic as the CLI prints it.
func epicHeader(id, title string) string {
	if title == "" || title == id {
		return id
	}
	return fmt.Sprintf("%s — %s", id, title)
}
