package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/saga-ai/saga-lsp/commands"
	"github.com/saga-ai/saga-lsp/store"
)

const newSynopsis = `new story <name> --title T [--description D] [--epic E] [--blocked-by a,b]
       saga-lsp new task <story> <task-id> --subject S [--description D] [--blocked-by a,b] [--priority P] [--active-form A] [--guidance G] [--done-when W]
       saga-lsp new epic <id> --title T [--description D]`

func runNew(env *Env, args []string) int {
	fs := newFlagSet(env, "new", newSynopsis)
	root := fs.String("root", "", "workspace root (default: nearest folder above the working directory with .saga/, else the working directory)")
	format := fs.String("format", "text", "output format: text or json ({\"created\":[…],\"updated\":[…]})")
	title := fs.String("title", "", "story or epic title")
	subject := fs.String("subject", "", "task subject: a short imperative title")
	description := fs.String("description", "", "full, self-contained description")
	epic := fs.String("epic", "", "story: the epic to list it in (the name gets the <epic>-- prefix)")
	blockedBy := fs.String("blocked-by", "", "comma-separated ids that must be completed first")
	priority := fs.String("priority", "", "task priority: critical, high, medium or low")
	activeForm := fs.String("active-form", "", "task: present-continuous form for the spinner")
	guidance := fs.String("guidance", "", "task: how to approach the work")
	doneWhen := fs.String("done-when", "", "task: completion criteria")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) == 0 || (*format != "text" && *format != "json") {
		fs.Usage()
		return exitUsage
	}
	r, err := resolveRoot(env, *root, true)
	if err != nil {
		return fail(env, err)
	}
	p, err := store.NewParser()
	if err != nil {
		return fail(env, err)
	}
	ctx := context.Background()
	var ch commands.Changes
	switch {
	case pos[0] == "story" && len(pos) == 2:
		ch, err = commands.CreateStory(ctx, p, r, commands.NewStory{Name: pos[1], Title: *title, Description: *description,
			Epic: *epic, BlockedBy: splitList(*blockedBy)})
	case pos[0] == "task" && len(pos) == 3:
		ch, err = commands.CreateTask(ctx, p, r, commands.NewTask{Story: pos[1], ID: pos[2], Subject: *subject,
			Description: *description, ActiveForm: *activeForm, BlockedBy: splitList(*blockedBy), Priority: *priority,
			Guidance: *guidance, DoneWhen: *doneWhen})
	case pos[0] == "epic" && len(pos) == 2:
		ch, err = commands.CreateEpic(ctx, p, r, commands.NewEpic{ID: pos[1], Title: *title, Description: *description})
	default:
		fs.Usage()
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "saga-lsp new %s: %v\n", pos[0], err)
		return exitUsage
	}
	if *format == "json" {
		return writeChanges(env, ch)
	}
	for _, c := range ch.Created {
		fmt.Fprintf(env.Stdout, "created %s\n", displayPath(env, r, c))
	}
	for _, c := range ch.Updated {
		fmt.Fprintf(env.Stdout, "updated %s\n", displayPath(env, r, c))
	}
	return exitOK
}

func writeChanges(env *Env, ch commands.Changes) int {
	if ch.Created == nil {
		ch.Created = []string{}
	}
	if ch.Updated == nil {
		ch.Updated = []string{}
	}
	data, err := store.MarshalIndent(ch)
	if err != nil {
		return fail(env, err)
	}
	env.Stdout.Write(data)
	return exitOK
}

// displayPath shows a root-relative path relative to the working directory.
func displayPath(env *Env, root, rel string) string {
	abs := filepath.Join(root, filepath.FromSlash(rel))
	if r, err := filepath.Rel(env.Dir, abs); err == nil {
		return r
	}
	return abs
}
