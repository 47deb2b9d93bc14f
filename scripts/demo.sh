#!/usr/bin/env bash
# The demo: saga-lsp on the bundled example workspaces.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")/.." && pwd)
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

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
exit 0
