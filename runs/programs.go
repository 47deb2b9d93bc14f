package runs

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// The programs a run drives besides saga-lsp itself (SelfPath). This file is
// the one place that says where each is found: claude and gh may be
// overridden ($SAGA_CLAUDE, $SAGA_GH: a pinned install, the tests'
// stand-ins), git and tmux come from PATH.
const (
	ProgramGit    = "git"
	ProgramGH     = "gh"
	ProgramClaude = "claude"
	ProgramTmux   = "tmux"
)

// Program is the command to run for a program: the override from env, else
// its name (looked up on PATH when run).
func Program(env func(string) string, name string) string {
	switch name {
	case ProgramClaude:
		return cmp.Or(Getenv(env, EnvClaude), name)
	case ProgramGH:
		return cmp.Or(Getenv(env, EnvGH), name)
	}
	return name
}

// LookProgram resolves Program to an executable's path; an error when it
// is not installed.
func LookProgram(env func(string) string, name string) (string, error) {
	return exec.LookPath(Program(env, name))
}

// GHOutput runs gh with args in dir (GHCommand) and returns its stdout,
// read to at most max bytes (a larger answer is an error: gh is never left
// blocked on a full pipe); a failure carries gh's own message.
func GHOutput(ctx context.Context, gh, dir string, max int, args ...string) ([]byte, error) {
	cmd := GHCommand(ctx, gh, dir, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	out, rerr := io.ReadAll(io.LimitReader(pipe, int64(max)+1))
	_, _ = io.Copy(io.Discard, pipe)
	err = cmd.Wait()
	switch {
	case rerr != nil:
		return nil, rerr
	case len(out) > max:
		return nil, fmt.Errorf("gh %s: the answer is over %d MiB", strings.Join(args[:min(2, len(args))], " "), max>>20)
	case err != nil:
		var ee *exec.ExitError
		if msg := strings.TrimSpace(errb.String()); msg != "" && errors.As(err, &ee) {
			return out, errors.New(msg)
		}
		return out, err
	}
	return out, nil
}

// GHCommand is gh run in dir without prompts or update notices, which
// would hang or clutter a run that no one watches.
func GHCommand(ctx context.Context, gh, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, gh, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GH_PROMPT_DISABLED=1", "GH_NO_UPDATE_NOTIFIER=1")
	return cmd
}

// StoryBranchPrefix starts the name of every story's branch.
const StoryBranchPrefix = "story/"

// StoryBranch is the branch a story's worker works on: story/<story>.
func StoryBranch(story string) string { return StoryBranchPrefix + story }

// StoryOfBranch is the story whose branch is branch (a short name), if it
// is one.
func StoryOfBranch(branch string) (string, bool) {
	s, ok := strings.CutPrefix(branch, StoryBranchPrefix)
	return s, ok && s != ""
}

// DryBranchPrefix starts the branch of a story's dry run: saga-dry/<story>.
// A dry run lives apart from the story's real attempt, so that no real run
// ever reads, resumes or pushes what the simulated agent did
// (docs/worker.md#dry-runs).
const DryBranchPrefix = "saga-dry/"

// DryBranch is the branch a story's dry run works on: saga-dry/<story>,
// never pushed.
func DryBranch(story string) string { return DryBranchPrefix + story }

// RunBranch is the branch a run of the story works on: DryBranch for a dry
// run, else StoryBranch.
func RunBranch(story string, dry bool) string {
	if dry {
		return DryBranch(story)
	}
	return StoryBranch(story)
}

// StoryOfRunBranch is the story whose real or dry branch is branch, and
// whether it is the dry one.
func StoryOfRunBranch(branch string) (story string, dry, ok bool) {
	if s, ok := strings.CutPrefix(branch, DryBranchPrefix); ok && s != "" {
		return s, true, true
	}
	s, ok := StoryOfBranch(branch)
	return s, false, ok
}
