package cli

import (
	"cmp"
	"errors"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// targetFlags are --story and --epic: what a name means when it is both a
// story and an epic (store.ResolveName decides; a name that is both, given
// without one of them, is refused rather than quietly taken as either).
type targetFlags struct{ story, epic *bool }

func addTargetFlags(c *cmdLine) targetFlags {
	return targetFlags{
		story: c.Bool("story", false, "the name is a story's (when an epic has the same name)"),
		epic:  c.Bool("epic", false, "the name is an epic's (when a story has the same name)"),
	}
}

// want is the kind the flags ask for.
func (t targetFlags) want() (store.NameKind, error) {
	switch {
	case *t.story && *t.epic:
		return "", usagef("--story and --epic exclude each other: pass the one the name is")
	case *t.story:
		return store.NameStory, nil
	case *t.epic:
		return store.NameEpic, nil
	}
	return store.NameEither, nil
}

// resolved is what a target names, with the workspace it was resolved in:
// a command that goes on to run it starts from that one parse.
type resolved struct {
	root   string
	kind   runs.Kind
	parser *store.Parser
	ws     *store.Workspace
	// unknown says why the name is neither a story nor an epic (with a
	// did-you-mean when a name is near), for commands that would otherwise
	// take it for an idle story (stop, follow).
	unknown error
}

// typo refuses a name that is no story or epic when a near name exists:
// said before a command takes it for an idle story.
func (r resolved) typo(name string) error {
	if r.unknown != nil && store.DidYouMean(name, append(r.ws.SortedStoryIDs(), r.ws.SortedEpicIDs()...)) != "" {
		return usagef("%v", r.unknown)
	}
	return nil
}

// kindOf resolves name in the workspace at root to a story or an epic. A
// name of neither is left to the command (as a story, or an epic with
// --epic), which says precisely what is wrong with it.
func (t targetFlags) kindOf(root, name string) (resolved, error) {
	want, err := t.want()
	if err != nil {
		return resolved{}, err
	}
	p, ws, err := workspaceAt(root)
	if err != nil {
		return resolved{}, err
	}
	r := resolved{root: root, kind: runs.KindStory, parser: p, ws: ws}
	kind, err := store.ResolveName(ws, name, want)
	var amb *store.AmbiguousNameError
	switch {
	case errors.As(err, &amb):
		return resolved{}, usagef("%v: pass --story or --epic", amb)
	case kind == store.NameEpic, err != nil && want == store.NameEpic:
		r.kind = runs.KindEpic
	case err != nil:
		r.unknown = err
	}
	return r, nil
}

// isEpic tells whether name is an epic, as kindOf would, from the files
// alone where they settle it (store.NameOnDisk): a command that loads the
// workspace itself afterwards (status) then loads it once.
func (t targetFlags) isEpic(root, name string) (bool, error) {
	want, err := t.want()
	if err != nil {
		return false, err
	}
	if kind, ok := store.NameOnDisk(root, name, want); ok {
		return kind == store.NameEpic, nil
	}
	r, err := t.kindOf(root, name)
	return r.kind == runs.KindEpic, err
}

// targetArg is the command line of follow, run and stop: --root,
// --format text|json, --story/--epic and one <story-or-epic>.
type targetArg struct {
	root, format *string
	flags        targetFlags
}

func addTargetArg(c *cmdLine, formatUsage string) targetArg {
	return targetArg{
		root:   c.String("root", "", rootUsage),
		format: c.String("format", "text", formatUsage),
		flags:  addTargetFlags(c),
	}
}

// json tells whether --format asks for JSON.
func (t targetArg) json() bool { return *t.format == "json" }

// resolve reports the first mistake of the command line — parse's error,
// a missing or extra name, the format, then those of the command's own
// checks — else finds the workspace root and what the name is.
func (t targetArg) resolve(env *Env, pos []string, parseErr error, checks ...error) (resolved, error) {
	first := []error{parseErr, wantArgs(pos, "<story-or-epic>"), oneOf("format", *t.format, "text", "json")}
	if err := cmp.Or(append(first, checks...)...); err != nil {
		return resolved{}, err
	}
	root, err := resolveRoot(env, *t.root, false)
	if err != nil {
		return resolved{}, err
	}
	return t.flags.kindOf(root, pos[0])
}

// resolve is store.ResolveName with its refusals as usage errors.
func (t targetFlags) resolve(ws *store.Workspace, name string, want store.NameKind) (store.NameKind, error) {
	kind, err := store.ResolveName(ws, name, want)
	var amb *store.AmbiguousNameError
	switch {
	case errors.As(err, &amb):
		return "", usagef("%v: pass --story or --epic", amb)
	case err != nil:
		return "", usagef("%v", err)
	}
	return kind, nil
}
