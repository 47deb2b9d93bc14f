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

# The checks and their sequences live in scripts/check.sh (make test: lint,
# cross and the portable tests, then the tests: docs/architecture.md#test-time).
lint:
	GO=$(GO) scripts/check.sh lint

# TEST_P: go test's -p and -parallel (4: most packages wait on the
# processes they drive). TESTFLAGS: more go test flags, e.g. -json (how
# docs/architecture.md's table of test time was measured).
TEST_P ?= 4
TESTFLAGS ?=
test:
	GO=$(GO) TEST_P=$(TEST_P) TESTFLAGS="$(TESTFLAGS)" scripts/check.sh test

# Every face builds for the six targets, and go vet passes for each GOOS
# (docs/platforms.md).
cross:
	GO=$(GO) scripts/check.sh cross

# The portable implementations tested on Linux (docs/platforms.md#the-portable-build).
test-portable:
	GO=$(GO) scripts/check.sh portable

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
