# saga-lsp — make demo (run it on the example workspace), make test (everything).
GO       ?= go
BIN      := bin/saga-lsp
# The version stamped into the binary; without git (a source archive) none
# is, and saga-lsp reports what the Go toolchain recorded (cli/version.go).
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS  := $(if $(VERSION),-X github.com/saga-ai/saga-lsp/cli.Version=$(VERSION))

.PHONY: build test bench demo install lint fuzz clean dist screenshots cross test-portable

# CGO_ENABLED=0: a static binary. go.lsp.dev/jsonrpc2 imports net, whose
# cgo resolver would link libc dynamically: ~0.7 ms more at every start, and
# Claude Code starts `saga-lsp hook` at every tool call (docs/architecture.md).
# saga-lsp-hook beside it, from the same build: the hook alone, which
# starts in half the time (docs/hooks.md#the-hook-program).
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/saga-lsp
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)-hook ./cmd/saga-lsp-hook

lint:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }

# -timeout 30m: go test's default (10 minutes a package) is shorter than
# the VS Code package on a fresh machine (it installs code-server first).
#
# SAGA_TEST_BUILDS: the test processes of the run share the programs they
# build (internal/testkit.BuildsVar) through a folder removed at the end.
#
# Side by side (docs/architecture.md#test-time): most test packages wait
# on the processes they drive (editors, Claude Code, git, the sandbox), so
# go test runs TEST_P packages at a time and TEST_P tests of a package
# that marks them parallel (-p and -parallel: at 2, the two cores were
# idle most of the time). Lint, cross and test-portable run first, not
# beside the tests: their go vet ./... and go build ./... walk the tree,
# and the VS Code tests rebuild folders in it (out/, test/artifacts) —
# a walk failed on a folder removed under it.
#
# SLOW_TESTS first: go test starts packages in the order named, so the
# longest start at once instead of last, and the rest fill the other
# slots. Their output is printed in that order too.
SLOW_TESTS := ./editors/vscode ./test/claudecode ./scripts/dist ./cli ./runs/land ./test/views \
	./runs/worker ./runs/github ./dashboard ./runs/epic ./lsp ./runs/verify
TEST_P ?= 4
# TESTFLAGS: more go test flags, e.g. -json (how docs/architecture.md's
# table of test time was measured).
TESTFLAGS ?=
test: lint cross test-portable
	d=$$(mktemp -d) && SAGA_TEST_BUILDS=$$d $(GO) test -p $(TEST_P) -parallel $(TEST_P) -count=1 -timeout 30m $(TESTFLAGS) $(SLOW_TESTS) ./... ./testdata/standin/...; \
		rc=$$?; rm -rf "$$d"; exit $$rc

# Every face builds for the six targets, and go vet passes for each GOOS
# (docs/platforms.md). CGO_ENABLED=0 -trimpath as for the release binary
# (scripts/dist's and cli's tests of release builds then find its packages
# compiled). go vet for darwin and windows with the same flags: it
# type-checks against what the builds compiled instead of compiling every
# package again; for linux it is lint's, already done (docs/architecture.md#test-time).
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
cross:
	@set -e; for p in $(PLATFORMS); do \
		echo "== go build $$p"; CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -trimpath ./...; \
	done
	@echo "== go vet GOOS=linux"; GOOS=linux $(GO) vet ./...
	@set -e; for os in darwin windows; do \
		echo "== go vet GOOS=$$os"; CGO_ENABLED=0 GOOS=$$os $(GO) vet -trimpath ./...; \
	done

# The portable implementations (directory reading, locks, liveness, atomic
# replace; what Windows uses) tested on Linux: the store's, the hook's and
# the language server's tests, the security ones among them, built with
# -tags portable (docs/platforms.md#the-portable-build).
PORTABLE_TESTS := ./internal/filesafe ./store/... ./hook ./lsp
test-portable:
	d=$$(mktemp -d) && SAGA_TEST_BUILDS=$$d $(GO) test -count=1 -tags portable $(PORTABLE_TESTS); \
		rc=$$?; rm -rf "$$d"; exit $$rc

# Benchmarks against workload W (generated once into .bench/, reused after).
# Fails when a budget is missed (bench/report exits 1) or go test failed
# (its exit code kept past tee).
bench: build
	@{ $(GO) test -run '^$$' -bench . -benchtime 10x -benchmem ./bench; echo $$? > .bench-exit; } | tee .bench-result.txt
	@$(GO) run ./bench/report < .bench-result.txt
	@test "$$(cat .bench-exit)" = 0 || { echo "make bench: go test exited $$(cat .bench-exit)"; exit 1; }

# Long fuzzing: every Go fuzz target for FUZZTIME each, then the randomized
# chaos tests (test/chaos and the packages' TestRandom*) with a total budget
# of CHAOSTIME instead of make test's few seconds. A failure prints the seed
# (SAGA_CHAOS_SEED=… replays it) or the input file the fuzzer wrote.
FUZZTIME  ?= 60s
CHAOSTIME ?= 5m
FUZZ_TARGETS := ./store/jsonc:FuzzParse ./store/jsonc:FuzzLineIndex ./store/schema:FuzzAgreesWithJSONSchema \
	./lsp:FuzzFrames ./lsp:FuzzEdits ./lsp:FuzzRequests
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "== $${t#*:} ($${t%%:*}, $(FUZZTIME))"; \
		$(GO) test $${t%%:*} -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME); \
	done
	SAGA_CHAOS_TIME=$(CHAOSTIME) $(GO) test -count=1 -timeout 0 -run 'Chaos|Random' ./test/chaos ./lsp

# The dashboard's pictures in docs/: its browser test photographs the pages
# of an epic run (dashboard/epic_run_test.go, TestEpicNeedsUser) into its
# artifact folder; they are copied into docs/. Look at them before
# committing. (make test keeps its pictures in a temporary folder.)
SHOTS := $(CURDIR)/.screenshots
screenshots:
	@rm -rf $(SHOTS) && mkdir -p $(SHOTS)
	$(GO) test -count=1 -run '^(TestEpicNeedsUser|TestOutputAsLines)$$' -artifacts -outputdir $(SHOTS) ./dashboard
	@for f in home epic story story-failing-check; do \
		src=$$(find $(SHOTS)/_artifacts -name $$f.png | head -1); \
		test -n "$$src" || { echo "no $$f.png: is chromium installed?"; exit 1; }; \
		cp "$$src" docs/dashboard-$$f.png && echo "docs/dashboard-$$f.png"; \
	done
	@rm -rf $(SHOTS)

demo: build
	@scripts/demo.sh $(BIN)

# The release (docs/releasing.md): archives for six targets, per-platform
# VS Code extensions, checksums.txt, in dist/.
dist:
	$(GO) run ./scripts/dist -out dist $(if $(VERSION),-version $(VERSION)) -vsix

# make install: saga-lsp and saga-lsp-hook, the man page and the shell
# completions under PREFIX, by default the user's own ~/.local (no root
# needed): man finds the page for a saga-lsp on PATH, bash-completion its
# script (docs/releasing.md#make-install). Each folder can be set on its
# own; e.g. make install PREFIX=/usr/local.
PREFIX      ?= $(HOME)/.local
BINDIR      ?= $(PREFIX)/bin
DATADIR     ?= $(PREFIX)/share
MANDIR      ?= $(DATADIR)/man
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR  ?= $(DATADIR)/zsh/site-functions
# fish: a user's install goes to fish's own folder for them, which every
# fish reads; another PREFIX's to its vendor_completions.d.
FISHCOMPDIR ?= $(if $(filter $(HOME)/.local,$(PREFIX)),$(HOME)/.config/fish/completions,$(DATADIR)/fish/vendor_completions.d)
install:
	CGO_ENABLED=0 GOBIN="$(abspath $(BINDIR))" $(GO) install -ldflags "$(LDFLAGS)" ./cmd/saga-lsp ./cmd/saga-lsp-hook
	@set -e; mkdir -p "$(MANDIR)/man1" "$(BASHCOMPDIR)" "$(ZSHCOMPDIR)" "$(FISHCOMPDIR)"; \
	"$(BINDIR)/saga-lsp" man > "$(MANDIR)/man1/saga-lsp.1"; \
	"$(BINDIR)/saga-lsp" completion bash > "$(BASHCOMPDIR)/saga-lsp"; \
	"$(BINDIR)/saga-lsp" completion zsh > "$(ZSHCOMPDIR)/_saga-lsp"; \
	"$(BINDIR)/saga-lsp" completion fish > "$(FISHCOMPDIR)/saga-lsp.fish"; \
	echo "installed saga-lsp and saga-lsp-hook in $(BINDIR), saga-lsp(1) in $(MANDIR), the completions in $(BASHCOMPDIR), $(ZSHCOMPDIR) and $(FISHCOMPDIR)"

clean:
	rm -rf bin dist .bench .bench-result.txt .bench-exit
