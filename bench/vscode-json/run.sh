#!/bin/sh
# Keystroke → diagnostics latency, side by side: saga-lsp against VS Code's
# JSON language server (npm package vscode-langservers-extracted) validating
# the same task file of workload W against the task schema, with the same
# keystrokes. See README.md beside this script.
#
#   bench/vscode-json/run.sh               # 20 ops of each benchmark
#   BENCHTIME=100x bench/vscode-json/run.sh
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
dir="$root/.bench/vscode-json" # git-ignored, like workload W beside it
pkgversion=4.10.0              # the version the figures in README.md come from

command -v node >/dev/null || { echo "run.sh: node is not installed" >&2; exit 2; }
command -v npm >/dev/null || { echo "run.sh: npm is not installed" >&2; exit 2; }

mkdir -p "$dir"
if [ ! -x "$dir/node_modules/.bin/vscode-json-language-server" ] ||
	! grep -q "\"version\": \"$pkgversion\"" "$dir/node_modules/vscode-langservers-extracted/package.json"; then
	[ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
	npm install --prefix "$dir" --no-audit --no-fund --save-exact "vscode-langservers-extracted@$pkgversion"
fi

cd "$root"
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev) # as make build stamps it
go build -ldflags "-X github.com/saga-ai/saga-lsp/cli.Version=$version" -o bin/saga-lsp ./cmd/saga-lsp
go test -run '^$' -bench 'LSPKeystroke|VSCodeJSONKeystroke' -benchtime "${BENCHTIME:-20x}" ./bench | tee "$dir/result.txt"
go run ./bench/report <"$dir/result.txt"
