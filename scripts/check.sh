#!/usr/bin/env bash
# check.sh lint|cross|portable|test: what make lint, make cross, make
# test-portable and make test run (the Makefile calls it; GO, TEST_P and
# TESTFLAGS come from there). One home for each sequence.
#
# make test runs lint, cross and the portable tests, then the tests
# (docs/architecture.md#test-time). Lint and cross compile what the tests
# then find in Go's cache (beside them, both would compile it), and their
# go vet ./... and go build ./... walk the tree, which the VS Code tests
# rebuild folders of (out/, test/artifacts): a walk beside them failed on
# a folder removed under it. The portable tests beside the tests (tried)
# slowed the longest packages more than they saved: make test took ≈ 17.5
# minutes instead of ≈ 15.
set -uo pipefail
GO=${GO:-go}
cd "$(dirname "$0")/.."

# Every face builds for the six targets, and go vet passes for each GOOS
# (docs/platforms.md).
PLATFORMS="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"
# The portable implementations (directory reading, locks, liveness, atomic
# replace; what Windows uses) tested on Linux: the store's, the hook's and
# the language server's tests, the security ones among them, built with
# -tags portable (docs/platforms.md#the-portable-build).
PORTABLE_TESTS="./internal/filesafe ./store/... ./hook ./lsp"
# The slowest first: go test starts packages in the order named, so these
# start at once and the rest fill the other slots (their output is
# printed in that order too).
SLOW_TESTS="./editors/vscode ./test/claudecode ./scripts/dist ./cli ./runs/land ./test/views
  ./runs/worker ./runs/github ./dashboard ./runs/epic ./lsp ./runs/verify"

lint() {
  $GO vet ./... || return 1
  local bad
  bad=$(gofmt -l $(git ls-files '*.go'))
  [ -z "$bad" ] || { echo "$bad"; echo "gofmt: files above need formatting"; return 1; }
}

# CGO_ENABLED=0 -trimpath as for the release binary (scripts/dist's and
# cli's tests of release builds then find its packages compiled). go vet
# for darwin and windows with the same flags: it type-checks against what
# the builds compiled instead of compiling every package again; linux's is
# lint's.
cross() {
  local p os
  for p in $PLATFORMS; do
    echo "== go build $p"
    CGO_ENABLED=0 GOOS=${p%/*} GOARCH=${p#*/} $GO build -trimpath ./... || return 1
  done
  for os in darwin windows; do
    echo "== go vet GOOS=$os"
    CGO_ENABLED=0 GOOS=$os $GO vet -trimpath ./... || return 1
  done
}

# SAGA_TEST_BUILDS: the test processes of a run share the programs they
# build (internal/testkit.BuildsVar) through a folder removed at the end.
portable() {
  local d rc
  d=$(mktemp -d)
  SAGA_TEST_BUILDS=$d $GO test -count=1 -tags portable $PORTABLE_TESTS
  rc=$?
  rm -rf "$d"
  return $rc
}

# -p and -parallel TEST_P: go test runs TEST_P packages at a time and
# TEST_P tests of a package that marks them parallel (at 2, the two cores
# were idle most of the time). -timeout 30m: go test's default (10 minutes
# a package) is shorter than the VS Code package on a fresh machine (it
# installs code-server first). TESTFLAGS: more go test flags, e.g. -json.
all() {
  lint && cross && portable || return 1
  builds=$(mktemp -d) # not local: the trap runs after all returns
  trap 'rm -rf "$builds"' EXIT
  SAGA_TEST_BUILDS=$builds $GO test -p "${TEST_P:-4}" -parallel "${TEST_P:-4}" -count=1 -timeout 30m \
    ${TESTFLAGS:-} $SLOW_TESTS ./... ./testdata/standin/...
}

case "${1:-}" in
  lint) lint ;;
  cross) cross ;;
  portable) portable ;;
  test) all ;;
  *) echo "usage: scripts/check.sh lint|cross|portable|test" >&2; exit 2 ;;
esac
