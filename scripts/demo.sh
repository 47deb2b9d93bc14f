#!/usr/bin/env bash
# The demo: saga-lsp on the bundled example workspaces.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")/.." && pwd)
# Bold headings on a terminal only (as saga-lsp colours its own output).
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ] && [ "${TERM:-}" != dumb ]; then
  step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
else
  step() { printf '\n$ %s\n' "$*"; }
fi

cd "$here/examples/workspace"
step "saga-lsp check            # examples/workspace: an epic with 3 stories and a standalone story"
"$bin" check
step "saga-lsp plan user-auth   # the epic's stories, in waves"
"$bin" plan user-auth
step "saga-lsp plan user-auth--api"
"$bin" plan user-auth--api

cd "$here/examples/mistakes"
step "saga-lsp check            # examples/mistakes: deliberate mistakes (exit 1 expected)"
"$bin" check
echo "(exit code $?)"
step "saga-lsp plan billing--invoices   # a cycle, reported with its weakest link"
"$bin" plan billing--invoices
echo "(exit code $?)"

# A story run end to end with the built-in simulated agent, in a temporary
# git copy of the example workspace (nothing here is touched). Everything the
# runs keep — Claude Code's config, the sessions, the stories' build caches
# (runs/cache.go: under XDG_CACHE_HOME, else ~/.cache) — goes beside that
# copy, and all of it is removed at the end.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/repo"
cp -r "$here/examples/workspace/.saga" "$tmp/repo/"
cd "$tmp/repo"
git init -q -b main
git add -A
git -c user.name=demo -c user.email=demo@localhost commit -q -m "example workspace"
export CLAUDE_CONFIG_DIR="$tmp/claude-config" SAGA_SESSION_DIR="$tmp/sessions" XDG_CACHE_HOME="$tmp/cache"
step "saga-lsp worker user-auth--api --dry-run   # in a temporary git copy: worktree, hydration, runs, hooks, commit"
"$bin" worker user-auth--api --dry-run --output-file "$tmp/sessions/demo.log"
echo "(exit code $?)"
step "saga-lsp status user-auth--api   # a dry run is never the story's: it stays in progress"
"$bin" status user-auth--api
step "git log saga-dry/user-auth--api   # the dry run's own branch"
git log --oneline saga-dry/user-auth--api | head -3

# The whole epic, with its runner and workers in a private tmux server, as a
# dry run too: it builds on the dry run above.
if command -v tmux >/dev/null; then
  export SAGA_TMUX_SOCKET="saga-demo-$$"
  trap 'tmux -L "$SAGA_TMUX_SOCKET" kill-server 2>/dev/null; rm -rf "$tmp"' EXIT
  step "saga-lsp run user-auth --dry-run --follow   # the epic: its stories in dependency order, each on its blockers' work"
  "$bin" run user-auth --dry-run --follow
  echo "(exit code $?)"
  step "saga-lsp status user-auth"
  "$bin" status user-auth
else
  printf '\n(tmux is not installed: skipping the epic run — `saga-lsp run user-auth --dry-run --follow`)\n'
fi
exit 0
