package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/scaffold"
	"github.com/saga-ai/saga-lsp/store"
)

// The forms of new: what each creates, its arguments and its flags.
const (
	newStorySynopsis = "new story <name> --title TITLE [--description DESCRIPTION] [--epic EPIC] [--blocked-by IDS]"
	newTaskSynopsis  = "new task <story> <task-id> --subject SUBJECT [--description DESCRIPTION] [--blocked-by IDS] [--priority critical|high|medium|low] [--active-form FORM] [--guidance TEXT] [--done-when CRITERIA] [--check COMMAND]… [--check-timeout SECONDS]"
	newEpicSynopsis  = "new epic <id> --title TITLE [--description DESCRIPTION]"
	newSynopsis      = newStorySynopsis + "\n" + newTaskSynopsis + "\n" + newEpicSynopsis
)

type newKind struct {
	name, synopsis string
	args           []string
	flags          []string // beside --root and --format
}

func newKinds() []newKind {
	return []newKind{
		{"story", newStorySynopsis, []string{"<name>"}, []string{"title", "description", "epic", "blocked-by"}},
		{"task", newTaskSynopsis, []string{"<story>", "<task-id>"},
			[]string{"subject", "description", "blocked-by", "priority", "active-form", "guidance", "done-when", "check", "check-timeout"}},
		{"epic", newEpicSynopsis, []string{"<id>"}, []string{"title", "description"}},
	}
}

func (k newKind) takes(flagName string) bool {
	return flagName == "root" || flagName == "format" || slices.Contains(k.flags, flagName)
}

func runNew(env *Env, args []string) int {
	c := newCmdLine("new")
	root := c.String("root", "", "workspace root `DIR` (default: nearest folder above the working directory with .saga/, else the working directory)")
	format := c.String("format", "text", "output `FORMAT`: text or json ({\"created\":[…],\"updated\":[…]})")
	title := c.String("title", "", "story or epic `title`")
	subject := c.String("subject", "", "task `subject`: a short imperative title")
	description := c.String("description", "", "full, self-contained `description`")
	epic := c.String("epic", "", "story: the `epic` to list it in (the name gets the <epic>-- prefix)")
	blockedBy := c.String("blocked-by", "", "comma-separated `ids` that must be completed first")
	priority := c.String("priority", "", "task `priority`: critical, high, medium or low")
	activeForm := c.String("active-form", "", "task: present-continuous `form` for the spinner")
	guidance := c.String("guidance", "", "task: how to approach the work (`text`)")
	doneWhen := c.String("done-when", "", "task: completion `criteria`")
	var checks []string
	c.Func("check", "task: a shell `command` that must pass before the task may be completed (repeatable)", func(v string) error {
		checks = append(checks, v)
		return nil
	})
	checkTimeout := c.Float64("check-timeout", 0, "task: `seconds` each check may run (default 600)")
	pos, err := c.parse(args)
	kind, kindErr := newKindOf(pos)
	if kindErr == nil {
		c = c.narrow("new "+kind.name, kind.synopsis, kind.takes)
		kindErr = cmp.Or(wantArgs(pos[1:], kind.args...), flagOfAnotherKind(c, kind))
	}
	if kindErr == nil && c.isSet("check-timeout") && *checkTimeout <= 0 {
		kindErr = usagef("--check-timeout must be a positive number of seconds, got %g", *checkTimeout)
	}
	if err := cmp.Or(err, kindErr, oneOf("format", *format, "text", "json")); err != nil {
		return c.fail(env, err)
	}
	r, err := resolveRoot(env, *root, true)
	if err != nil {
		return c.fail(env, err)
	}
	p, err := store.NewParser()
	if err != nil {
		return c.fail(env, err)
	}
	ctx := context.Background()
	var ch scaffold.Changes
	switch kind.name {
	case "story":
		ch, err = scaffold.CreateStory(ctx, p, r, scaffold.NewStory{Name: pos[1], Title: *title, Description: *description,
			Epic: *epic, BlockedBy: splitList(*blockedBy)})
	case "task":
		ch, err = scaffold.CreateTask(ctx, p, r, scaffold.NewTask{Story: pos[1], ID: pos[2], Subject: *subject,
			Description: *description, ActiveForm: *activeForm, BlockedBy: splitList(*blockedBy), Priority: *priority,
			Guidance: *guidance, DoneWhen: *doneWhen, Checks: checks, CheckTimeout: *checkTimeout})
	case "epic":
		ch, err = scaffold.CreateEpic(ctx, p, r, scaffold.NewEpic{ID: pos[1], Title: *title, Description: *description})
	}
	if err != nil {
		return c.fail(env, err)
	}
	if *format == "json" {
		if ch.Created == nil {
			ch.Created = []string{}
		}
		if ch.Updated == nil {
			ch.Updated = []string{}
		}
		if err := printJSON(env.Stdout, ch); err != nil {
			return c.fail(env, fmt.Errorf("write output: %w", err))
		}
		return exitOK
	}
	for _, f := range ch.Created {
		fmt.Fprintf(env.Stdout, "created %s\n", displayPath(env, r, f))
	}
	for _, f := range ch.Updated {
		fmt.Fprintf(env.Stdout, "updated %s\n", displayPath(env, r, f))
	}
	return exitOK
}

// newKindOf is the form the first argument names.
func newKindOf(pos []string) (newKind, error) {
	var names []string
	for _, k := range newKinds() {
		if len(pos) > 0 && k.name == pos[0] {
			return k, nil
		}
		names = append(names, k.name)
	}
	if len(pos) == 0 {
		return newKind{}, usagef("missing what to create: %s", strings.Join(names, ", "))
	}
	return newKind{}, oneOf("kind", pos[0], names...)
}

// flagOfAnotherKind refuses a flag the form does not take (a --subject
// for a story), which would otherwise be dropped silently.
func flagOfAnotherKind(c *cmdLine, k newKind) error {
	var err error
	c.Visit(func(f *flag.Flag) {
		if err != nil || k.takes(f.Name) {
			return
		}
		for _, other := range newKinds() {
			if other.takes(f.Name) {
				err = usagef("--%s is a flag of new %s, not of new %s", f.Name, other.name, k.name)
				return
			}
		}
	})
	return err
}
