#!/usr/bin/env bash
# package-target.sh <vsce-target> <saga-lsp binary> <out.vsix> [version]
#
# Packages one platform's .vsix with the given saga-lsp inside, as
# server/saga-lsp (server/saga-lsp.exe for win32-*), which the extension runs
# unless the user's saga.serverPath names another (src/server.ts). make dist
# calls it once per target: linux-x64, linux-arm64, darwin-x64, darwin-arm64,
# win32-x64, win32-arm64. [version] (x.y.z, a leading v dropped) is written
# into the .vsix only; package.json is left as it is.
#
# The extension is built once here (npm ci when needed, then npm run build:
# tsc, esbuild, the schemas copied into out/schemas); each package is made in
# a private staging copy, so several can run at once.
set -euo pipefail

die() { echo "package-target.sh: $*" >&2; exit 2; }
[ $# -ge 3 ] && [ $# -le 4 ] || die "usage: package-target.sh <vsce-target> <saga-lsp binary> <out.vsix> [version]"
target=$1 bin=$2 out=$3 version=${4:-}
version=${version#v}

EXT=$(cd "$(dirname "$0")/.." && pwd)
case $target in
  win32-x64|win32-arm64) exe=saga-lsp.exe magic='4d5a' ;;         # MZ
  linux-x64|linux-arm64|alpine-x64|alpine-arm64|linux-armhf) exe=saga-lsp magic='7f454c46' ;;  # \x7fELF
  darwin-x64|darwin-arm64) exe=saga-lsp magic='cffaedfe' ;;       # Mach-O 64-bit
  *) die "unknown target $target (want one of vsce's: linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64, win32-arm64)" ;;
esac
[ -f "$bin" ] || die "no saga-lsp binary at $bin"
# A binary for another OS in a target's package would be found and fail to
# run on every user's machine: check its header against the target's format.
head=$(od -An -tx1 -N4 "$bin" | tr -d ' \n')
[ "${head:0:${#magic}}" = "$magic" ] || die "$bin is not a $target executable (its first bytes are $head): build it with the target's GOOS/GOARCH"
if [ -n "$version" ] && ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  die "version $version: the Marketplace and Open VSX take major.minor.patch only"
fi
# Paths as given, from the working directory: resolved before the cd below
# (README's recipe passes bin/saga-lsp from the repository's root).
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
case $out in /*) ;; *) out=$PWD/$out ;; esac

cd "$EXT"
# The build and the copy out of it hold a lock: packagings running at once
# (the VS Code test's, make dist's, in one checkout) each ran npm ci in
# the same node_modules, one removing what the other was reading, and
# each rewrote out/ while another copied it. The lock file is the
# checkout's own (never a guessable name in a shared /tmp). Without flock
# (macOS), as before.
if command -v flock >/dev/null; then
  exec 9>>"$EXT/.build.lock"
  flock 9
fi
npm_quiet=(--no-audit --no-fund --loglevel=error)
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci "${npm_quiet[@]}"
fi
# The build is skipped when out/ was built from these very inputs (its
# stamp, written after a whole build): make dist packages its six targets
# from one build instead of six (docs/architecture.md#test-time).
inputs=$(node -e '
  const crypto = require("crypto"), fs = require("fs"), path = require("path");
  const h = crypto.createHash("sha256");
  const walk = (f) => {
    if (fs.statSync(f).isDirectory()) return fs.readdirSync(f).sort().forEach((n) => walk(path.join(f, n)));
    h.update(f + "\0" + fs.statSync(f).size + "\0");
    h.update(fs.readFileSync(f));
  };
  process.argv.slice(1).forEach(walk);
  console.log(h.digest("hex"));
' src esbuild.mjs tsconfig.json package.json package-lock.json node_modules/.package-lock.json ../../store/schema/schemas)
if [ "$(cat out/.inputs 2>/dev/null)" != "$inputs" ]; then
  npm run --silent build
  echo "$inputs" > out/.inputs
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/saga-vsix.XXXXXX")
trap 'rm -rf "$stage"' EXIT
cp -R package.json README.md CHANGELOG.md LICENSE .vscodeignore media out "$stage/"
if command -v flock >/dev/null; then
  exec 9>&-
fi
mkdir -p "$stage/server"
cp "$bin" "$stage/server/$exe"
chmod 755 "$stage/server/$exe"
# Built above: no prepublish in the staging copy (it has no sources).
node -e '
  const fs = require("fs"), f = process.argv[1], p = JSON.parse(fs.readFileSync(f, "utf8"));
  delete p.scripts["vscode:prepublish"];
  fs.writeFileSync(f, JSON.stringify(p, null, 2) + "\n");
' "$stage/package.json"

args=(package --no-dependencies --target "$target" --out "$out")
[ -z "$version" ] || args+=("$version" --no-git-tag-version --no-update-package-json)
(cd "$stage" && "$EXT/node_modules/.bin/vsce" "${args[@]}" >/dev/null)
[ -f "$out" ] || die "vsce wrote no $out"
echo "$out ($target, $(du -k "$out" | cut -f1) KiB)"
