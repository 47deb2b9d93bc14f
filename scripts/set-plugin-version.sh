#!/bin/sh
# set-plugin-version.sh <x.y.z>: stamps the Claude Code plugin's version
# (editors/claude-code/.claude-plugin/plugin.json, the one place it is kept;
# the repository's marketplace entry has none).
#
# Claude Code installs the plugin from this repository's git tree and updates
# an installed copy only when that version changes, so a release stamps it
# and commits it before tagging:
#   scripts/set-plugin-version.sh 0.2.0 && git commit -am "plugin 0.2.0" && git tag v0.2.0
set -eu
die() { echo "set-plugin-version.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: set-plugin-version.sh <x.y.z>"
version=${1#v}
case $version in
  *[!0-9A-Za-z.-]*|'') die "version $1: want x.y.z (semver)" ;;
esac
echo "$version" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$' || die "version $1: want x.y.z (semver)"
manifest=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)/editors/claude-code/.claude-plugin/plugin.json
[ "$(grep -c '^  "version": "[^"]*",$' "$manifest")" = 1 ] || die "$manifest: no single top-level \"version\" line to stamp"
tmp=$manifest.tmp.$$
trap 'rm -f "$tmp"' EXIT
sed "s/^  \"version\": \"[^\"]*\",\$/  \"version\": \"$version\",/" "$manifest" > "$tmp"
mv "$tmp" "$manifest"
echo "$manifest: version $version"
