//go:build unix

// Package walkthrough_test is a new user's first hour as README.md gives it
// (issue 33): the install sections' commands that run offline, as written,
// the first look, and a first run on a fresh project of their own — doctor,
// new, check, verify, a dry run, status and plan — with every line each
// command prints checked for what a person should never read: an escaped
// tab or newline, a stray placeholder, a count in the wrong number, and a
// dry run read as the story's own result.
//
// The README's commands are read from README.md, never copied here, so the
// test fails when the README and the program drift apart; the commands that
// cannot run offline are listed in readmeCommands with the reason, and a
// README command in neither list fails the test.
package walkthrough_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// readmeCommand is one command of the README's install sections: run (the
// shell line, with what the README leaves to the reader filled in), in the
// copy of the repository or in the fresh project after its first run, or
// not run, and why.
type readmeCommand struct {
	text  string // as the README writes it, its comment cut
	run   string // the line run by sh; "" when it is not run
	where string // "root" (the repository's copy) or "project" (the fresh project)
	why   string // why it is not run
}

// readmeCommands is every command of the README's install sections. The
// order is the one run: the binary is built and installed before the
// commands that use saga-lsp from PATH.
var readmeCommands = []readmeCommand{
	{text: "make build", run: "make build", where: "root"},
	{text: "make install", run: `make install PREFIX="$PREFIX"`, where: "root"}, // the README: "or PREFIX=…"
	{text: "saga-lsp --version", run: "saga-lsp --version", where: "root"},
	{text: "saga-lsp completion bash|zsh|fish", run: "saga-lsp completion bash && saga-lsp completion zsh && saga-lsp completion fish", where: "root"},
	{text: "saga-lsp man", run: "saga-lsp man", where: "root"},
	{text: "saga-lsp schema task > task.schema.json", run: "saga-lsp schema task > task.schema.json", where: "root"},
	{text: "saga-lsp check --format github", run: "saga-lsp check --format github", where: "project"},

	{text: "sha256sum -c checksums.txt --ignore-missing", why: "needs a release's checksums.txt: scripts/dist's TestDist makes the archives and checks them"},
	{text: "make dist", why: "builds six targets' archives and the per-platform VS Code extensions (npm's registry): scripts/dist's TestDist"},
	{text: "CGO_ENABLED=0 go install github.com/saga-ai/saga-lsp/cmd/...@latest", why: "@latest needs the network (the module proxy); make install builds the same programs from the clone"},
	{text: "go install github.com/saga-ai/saga-lsp/cmd/saga-lsp@latest", why: "@latest needs the network (the module proxy)"},
	{text: "editors/vscode/scripts/package-target.sh linux-x64 bin/saga-lsp saga-lsp.vsix", why: "npm's registry (npm ci): editors/vscode's TestREADMERecipe runs the README's recipe as written (SAGA_VSCODE_TEST=1, as .ci/run sets)"},
	{text: "code --install-extension saga-lsp.vsix", why: "needs VS Code: editors/vscode's TestVSCodeExtension installs a .vsix packaged the same way into code-server"},
	{text: "claude plugin marketplace add saga-ai/saga-lsp", why: "needs GitHub and the real Claude Code: editors/claude-code's TestRealCLIInstallsFromRepository adds the repository served as a git URL on 127.0.0.1"},
	{text: "claude plugin install saga-lsp@saga-ai", why: "needs the real Claude Code: editors/claude-code's TestRealCLIInstallsFromRepository installs it from that marketplace"},
}

// installSections are the README's sections whose command blocks are
// commands to run; inlineSections those whose commands stand in the text.
var (
	installSections = []string{"Install", "In CI", "Editor setup", "VS Code extension", "Neovim plugin", "Claude Code plugin", "Editors without the server"}
	inlineSections  = []string{"Install", "Editors without the server"}
)

// TestWalkthrough is the README's install commands, its first look and a
// first run on a fresh project, every line printed checked.
func TestWalkthrough(t *testing.T) {
	testkit.Bwrap(t) // a run's checks and its agent's Bash are confined
	testkit.NeedsTool(t, "make", "Debian: apt-get install -y make")
	socket := testkit.TmuxServer(t)
	readme := testkit.ReadFile(t, filepath.Join(testkit.ModuleRoot(t), "README.md"))
	sections := readmeSections(readme)
	readmeInstallCommands(t, sections)
	w := &walk{t: t}

	// The install sections: a copy of the repository as a clone has it.
	root := testkit.CopyRepository(t)
	prefix := t.TempDir()
	rootEnv := append(goEnv(t), "PREFIX="+prefix, "PATH="+filepath.Join(prefix, "bin")+":"+os.Getenv("PATH"))
	w.note("# README.md, the install sections (a copy of the repository; PREFIX=" + prefix + ")")
	firstLookDone := false
	for _, c := range readmeCommands {
		if c.where != "root" {
			continue
		}
		if c.text == "make install" && !firstLookDone {
			// After make build: the first look uses bin/saga-lsp.
			w.firstLook(root, rootEnv, sections)
			firstLookDone = true
		}
		if r := w.sh(root, rootEnv, c.run); r.Code != 0 {
			t.Fatalf("the README's %q (run as %q) failed: exit %d", c.text, c.run, r.Code)
		}
	}
	for _, name := range []string{"bin/saga-lsp", "bin/saga-lsp-hook", "share/man/man1/saga-lsp.1"} {
		if _, err := os.Stat(filepath.Join(prefix, name)); err != nil {
			t.Errorf("make install PREFIX=…: %v", err)
		}
	}
	if !json.Valid([]byte(testkit.ReadFile(t, filepath.Join(root, "task.schema.json")))) {
		t.Error("saga-lsp schema task > task.schema.json wrote no JSON")
	}

	// A first run on a project of the user's own, with the installed
	// saga-lsp: stand-ins for claude and gh, the real git, tmux, bwrap.
	p := newProject(t, prefix, socket)
	w.note("")
	w.note("# a first run: a new git repository with a Go module (example.com/shop), origin a local bare repository")
	w.note("# PATH: the stand-in claude and gh, then the installed saga-lsp; tmux -L " + socket)
	w.firstRun(p)

	for _, c := range readmeCommands {
		if c.where == "project" {
			if r := w.sh(p.dir, p.env, c.run); r.Code != 0 {
				t.Errorf("the README's %q in the project after its first run: exit %d", c.text, r.Code)
			}
		}
	}
	w.note("")
	w.note("# not run, by design:")
	for _, c := range readmeCommands {
		if c.run == "" {
			w.note("#   " + c.text + " — " + c.why)
		}
	}
	t.Log("the walkthrough:\n" + w.log.String())
}

// TestREADMECommandsListed is the table against the README: each command
// of its install sections is run or said why not, and the table names no
// command the README has dropped.
func TestREADMECommandsListed(t *testing.T) {
	readme := testkit.ReadFile(t, filepath.Join(testkit.ModuleRoot(t), "README.md"))
	readmeInstallCommands(t, readmeSections(readme))
}

// readmeInstallCommands are the commands of the README's install sections:
// the lines of their sh and console blocks, the run steps of their YAML,
// and the inline commands of inlineSections. Each must be in
// readmeCommands, and each entry there in the README.
func readmeInstallCommands(t *testing.T, sections map[string]string) []string {
	t.Helper()
	var found []string
	add := func(c string) {
		if !slices.Contains(found, c) {
			found = append(found, c)
		}
	}
	for _, name := range installSections {
		body, ok := sections[name]
		if !ok {
			t.Errorf("README.md has no section %q (the install sections: %v)", name, installSections)
			continue
		}
		for _, b := range fencedBlocks(body) {
			for _, line := range strings.Split(b.text, "\n") {
				line = strings.TrimSpace(commentRE.ReplaceAllString(line, ""))
				switch {
				case line == "" || strings.HasPrefix(line, "#"):
				case b.lang == "sh" || b.lang == "bash":
					add(line)
				case b.lang == "console" && strings.HasPrefix(line, "$ "):
					add(strings.TrimPrefix(line, "$ "))
				case b.lang == "yaml" && strings.HasPrefix(line, "- run: "):
					add(strings.TrimPrefix(line, "- run: "))
				}
			}
		}
	}
	for _, name := range inlineSections {
		prose := fenceRE.ReplaceAllString(sections[name], "")
		for _, m := range spanRE.FindAllStringSubmatch(prose, -1) {
			if inlineCommandRE.MatchString(m[1]) {
				add(m[1])
			}
		}
	}
	for _, c := range found {
		if !slices.ContainsFunc(readmeCommands, func(rc readmeCommand) bool { return rc.text == c }) {
			t.Errorf("README.md's install sections show %q: run it in TestWalkthrough or list it in readmeCommands with why it cannot run offline", c)
		}
	}
	for _, rc := range readmeCommands {
		if !slices.Contains(found, rc.text) {
			t.Errorf("readmeCommands lists %q, which README.md's install sections no longer show", rc.text)
		}
	}
	return found
}

var (
	fenceRE         = regexp.MustCompile("(?s)```(\\w*)\\n(.*?)```")
	spanRE          = regexp.MustCompile("`([^`\n]+)`")
	commentRE       = regexp.MustCompile(`\s+#\s.*$`)
	inlineCommandRE = regexp.MustCompile(`^(saga-lsp|make|go|CGO_ENABLED=\S+|sha256sum|claude|code) \S`)
)

type block struct{ lang, text string }

func fencedBlocks(body string) []block {
	var bs []block
	for _, m := range fenceRE.FindAllStringSubmatch(body, -1) {
		bs = append(bs, block{m[1], m[2]})
	}
	return bs
}

// readmeSections are the README's "## " sections by their heading.
func readmeSections(readme string) map[string]string {
	sections := map[string]string{}
	parts := regexp.MustCompile(`(?m)^## (.*)$`).Split(readme, -1)
	heads := regexp.MustCompile(`(?m)^## (.*)$`).FindAllStringSubmatch(readme, -1)
	for i, h := range heads {
		sections[strings.TrimSpace(h[1])] = parts[i+1]
	}
	return sections
}

// firstLook runs the README's "A first look" as written, from the copy's
// root where make build left bin/saga-lsp: each command's output holds the
// lines the README shows, in its order ("…" stands for lines left out).
func (w *walk) firstLook(root string, env []string, sections map[string]string) {
	t := w.t
	t.Helper()
	body, ok := sections["A first look"]
	if !ok {
		t.Fatal(`README.md has no section "A first look"`)
	}
	w.note("")
	w.note("# README.md, A first look")
	ran := 0
	for _, b := range fencedBlocks(body) {
		if b.lang != "console" {
			continue
		}
		var cmd string
		var want []string
		flush := func() {
			if cmd == "" {
				return
			}
			r := w.sh(root, env, cmd)
			ran++
			if r.Code > 1 { // 1: check found errors, as the README shows
				t.Errorf("the first look's %q: exit %d", cmd, r.Code)
			}
			got := strings.Split(strings.TrimRight(r.Stdout+r.Stderr, "\n"), "\n")
			if why := shows(got, want); why != "" {
				t.Errorf("the first look's %q does not print what the README shows: %s\nit prints:\n%s", cmd, why, strings.Join(got, "\n"))
			}
		}
		for _, line := range strings.Split(strings.TrimRight(b.text, "\n"), "\n") {
			if c, ok := strings.CutPrefix(line, "$ "); ok {
				flush()
				cmd, want = strings.TrimSpace(commentRE.ReplaceAllString(c, "")), nil
				continue
			}
			want = append(want, line)
		}
		flush()
	}
	if ran == 0 {
		t.Error(`README.md's "A first look" shows no command in a console block`)
	}
}

// shows tells whether output got is what the README shows as want, line
// for line, where a line "…" stands for lines left out; it says where not.
func shows(got, want []string) string {
	var segments [][]string
	seg := []string{}
	for _, line := range want {
		if line == "…" {
			segments = append(segments, seg)
			seg = []string{}
			continue
		}
		seg = append(seg, line)
	}
	segments = append(segments, seg)
	at := 0
	for k, seg := range segments {
		if len(seg) == 0 {
			continue
		}
		i := at
		for ; i+len(seg) <= len(got); i++ {
			if slices.Equal(got[i:i+len(seg)], seg) {
				break
			}
		}
		switch {
		case i+len(seg) > len(got):
			return fmt.Sprintf("after its line %d, it does not print these lines of the README's, in a row:\n%s", at, strings.Join(seg, "\n"))
		case k == 0 && i != 0:
			return "its first lines are not the README's (put … before them if lines are left out)"
		}
		at = i + len(seg)
	}
	if len(segments[len(segments)-1]) > 0 && at != len(got) {
		return "it prints more after the README's last line (end with … if lines are left out)"
	}
	return ""
}

// project is the user's fresh project: a git repository with a Go module
// and an origin, and the environment of a machine with saga-lsp installed.
type project struct {
	dir string
	env []string
}

func newProject(t *testing.T, prefix, socket string) *project {
	t.Helper()
	src := t.TempDir()
	testkit.WriteFiles(t, src, map[string]string{
		"go.mod":               "module example.com/shop\n\ngo 1.26\n",
		"cart/cart.go":         "// Package cart is the shop's cart.\npackage cart\n\n// Total sums the prices.\nfunc Total(prices []int) int {\n\tt := 0\n\tfor _, p := range prices {\n\t\tt += p\n\t}\n\treturn t\n}\n",
		"cart/cart_test.go":    "package cart\n\nimport \"testing\"\n\nfunc TestTotal(t *testing.T) {\n\tif got := Total([]int{1, 2}); got != 3 {\n\t\tt.Fatalf(\"Total = %d, want 3\", got)\n\t}\n}\n",
		"checkout/checkout.go": "// Package checkout takes the payment.\npackage checkout\n\n// Pay charges total.\nfunc Pay(total int) error { return nil }\n",
		// Not written yet: the task of shop--checkout is to make it pass.
		"checkout/checkout_test.go": "package checkout\n\nimport \"testing\"\n\nfunc TestPayRefusesZero(t *testing.T) {\n\tif Pay(0) == nil {\n\t\tt.Fatal(\"Pay(0) succeeded; want an error\")\n\t}\n}\n",
	})
	dir := testkit.GitRepo(t, src)
	testkit.BareOrigin(t, dir)
	stand := t.TempDir()
	for name, pkg := range map[string]string{"claude": "./testdata/standin/claude", "gh": "./testdata/standin/gh"} {
		if err := os.Symlink(testkit.Build(t, pkg), filepath.Join(stand, name)); err != nil {
			t.Fatal(err)
		}
	}
	home, tmp := t.TempDir(), t.TempDir()
	testkit.WriteFiles(t, home, map[string]string{".claude/.credentials.json": `{"claudeAiOauth": {"accessToken": "sk-ant-stand-in"}}`})
	env := goEnv(t)
	env = slices.DeleteFunc(env, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == "HOME" || k == "PATH" || k == "XDG_CACHE_HOME" || k == "TERM" || k == "GH_TOKEN" || k == "GITHUB_TOKEN"
	})
	env = append(env, "HOME="+home, "TERM=dumb",
		"PATH="+stand+":"+filepath.Join(prefix, "bin")+":"+os.Getenv("PATH"),
		"SAGA_TMUX_SOCKET="+socket, "SAGA_SESSION_DIR="+filepath.Join(tmp, "sessions"),
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"), "GH_STANDIN_STATE="+filepath.Join(tmp, "gh.json"),
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com")
	return &project{dir: dir, env: env}
}

// firstRun is a user's first hour on their project, each command as they
// would type it, and what its output must agree on.
func (w *walk) firstRun(p *project) {
	t := w.t
	t.Helper()
	must := func(line string, codes ...int) testkit.Result {
		t.Helper()
		r := w.sh(p.dir, p.env, line)
		if !slices.Contains(append(codes, 0), r.Code) {
			t.Fatalf("%s: exit %d", line, r.Code)
		}
		return r
	}
	must("saga-lsp doctor")
	must("saga-lsp new --help")
	must(`saga-lsp new epic shop --title "The shop"`)
	must(`saga-lsp new story cart --epic shop --title "A cart" --description "Sum what the customer buys."`)
	must(`saga-lsp new task shop--cart total --subject "Sum the cart" --check "go test ./cart"`)
	must(`saga-lsp new task shop--cart discount --subject "Apply a discount" --blocked-by total`)
	must(`saga-lsp new story checkout --epic shop --title "Checkout" --blocked-by shop--cart`)
	must(`saga-lsp new task shop--checkout refuse-zero --subject "Refuse an empty cart" --check "go test ./checkout"`)
	must("saga-lsp check")
	must(`git add -A && git commit -q -m "The shop's first stories" && git push -q`)
	must("saga-lsp plan shop")
	must("saga-lsp verify shop--cart")
	// A check that does not pass yet: go test's own lines, its tabs kept.
	if r := must("saga-lsp verify shop--checkout", 1); !strings.Contains(r.Stdout, "FAIL\texample.com/shop/checkout") {
		t.Errorf("verify shop--checkout does not show go test's line with its tab (FAIL<tab>example.com/shop/checkout):\n%s", r.Stdout)
	}
	must("saga-lsp run --help")
	run := must("saga-lsp run shop--cart --dry-run --follow")
	status := must("saga-lsp status")
	story := must("saga-lsp status shop--cart")
	js := must("saga-lsp status --format json")
	epic := must("saga-lsp status shop")
	plan := must("saga-lsp plan shop")
	w.agree(run, status, story, js, epic, plan)
}

// agree checks that a dry run is told apart from the story's own result by
// every command after it, and that run's end line and status say the same.
func (w *walk) agree(run, status, story, js, epic, plan testkit.Result) {
	t := w.t
	t.Helper()
	const dry = "dry run completed · 2/2 tasks (simulated, not the story's)"
	var st struct{ Stories []storyJSON }
	if err := json.Unmarshal([]byte(js.Stdout), &st); err != nil {
		t.Fatalf("status --format json: %v", err)
	}
	i := slices.IndexFunc(st.Stories, func(s storyJSON) bool { return s.ID == "shop--cart" })
	if i < 0 {
		t.Fatalf("status --format json has no shop--cart:\n%s", js.Stdout)
	}
	cart := st.Stories[i]
	if cart.State != "pending" || cart.Status != "pending" || cart.Done != 0 || cart.Total != 2 {
		t.Errorf("after a dry run, status --format json says shop--cart is %s (status %s), %d/%d tasks done: the dry run's result taken for the story's", cart.State, cart.Status, cart.Done, cart.Total)
	}
	if cart.DryRun == nil || cart.DryRun.State != "completed" || cart.DryRun.Done != 2 {
		t.Errorf("status --format json does not report the dry run apart: %+v", cart.DryRun)
	}
	// run's last line is its end: the dry run's, in status's words.
	out := strings.Split(strings.TrimSpace(run.Stdout+"\n"+run.Stderr), "\n")
	end := out[len(out)-1]
	if !strings.HasPrefix(end, "dry run completed") || !strings.Contains(end, "2/2 tasks (simulated, not the story's)") {
		t.Errorf("run --dry-run --follow ends with %q; status says %q (the story pending, 0/2 tasks): they disagree", end, dry)
	}
	for _, line := range strings.Split(status.Stdout, "\n") {
		if !strings.Contains(line, "shop--cart ") {
			continue
		}
		if !strings.Contains(line, "[pending] 0/2") || !strings.Contains(line, dry) {
			t.Errorf("status after the dry run: %q, want [pending] 0/2 and %q", line, dry)
		}
		if strings.Contains(line, "last run completed") {
			t.Errorf("status after the dry run says %q: its only run was the dry run, which is not the story's", line)
		}
	}
	if !strings.Contains(story.Stdout, "status:   pending, 0/2 tasks done") || strings.Contains(story.Stdout, "[completed]") || strings.Contains(story.Stdout, "last run completed") {
		t.Errorf("status shop--cart after the dry run takes its result for the story's:\n%s", story.Stdout)
	}
	if !regexp.MustCompile(`(?m)^  shop--cart +ready +0/2 `).MatchString(epic.Stdout) || !strings.Contains(epic.Stdout, dry) {
		t.Errorf("status shop after the dry run: want shop--cart ready 0/2 and %q:\n%s", dry, epic.Stdout)
	}
	if !strings.Contains(plan.Stdout, "Stories to execute: 2") {
		t.Errorf("plan shop after the dry run does not plan both stories:\n%s", plan.Stdout)
	}
}

// storyJSON is what the walkthrough reads of a story in status --format json.
type storyJSON struct {
	ID, State, Status string
	Done, Total       int
	DryRun            *struct {
		State       string
		Done, Total int
	}
}

// walk runs the commands and keeps their transcript.
type walk struct {
	t   *testing.T
	log strings.Builder
}

func (w *walk) note(s string) { w.log.WriteString(s + "\n") }

// sh runs line with sh in dir, as typed at a shell, records it and its
// output, and checks every line it printed.
func (w *walk) sh(dir string, env []string, line string) testkit.Result {
	w.t.Helper()
	r := testkit.Run(w.t, dir, env, "", "/bin/sh", "-c", line)
	w.note("$ " + line)
	for _, stream := range []string{r.Stdout, r.Stderr} {
		lines := strings.Split(strings.TrimRight(stream, "\n"), "\n")
		if stream == "" {
			lines = nil
		}
		for i, l := range lines {
			if i == 12 && len(lines) > 14 {
				w.note(fmt.Sprintf("… (%d more lines, each checked)", len(lines)-12))
				break
			}
			w.note(l)
		}
	}
	if r.Code != 0 {
		w.note(fmt.Sprintf("[exit %d]", r.Code))
	}
	w.lint(line, r)
	return r
}

var (
	// A tab or newline shown as its escape, as issue 33's point 1 had.
	escapedRE = regexp.MustCompile(`\\[tn]`)
	// A flag's placeholder taken from its text, uppercased
	// ("--dry-run SAGA-LSP RESET <STORY>", "--github-actions RUN --ON GITHUB").
	placeholderRE = regexp.MustCompile(`[A-Z][A-Z-]+ <[A-Z]+>|--[A-Z]{2,}`)
	// A count's word in the wrong number, or hedged: "(1 stories)", "run(s)".
	pluralRE = regexp.MustCompile(`(^|[\s(\[])1 (stories|tasks|runs|epics|errors|warnings|problems|checks|files|waves|findings)\b|\w\(s\)|(^|[\s(\[])(0|[2-9]|[1-9]\d+) (story|task|run|epic|error|warning|problem|check|file|wave|finding)\b`)
	// A help's flag list line and its synopsis's bracketed flags.
	flagLineRE  = regexp.MustCompile(`^  (--[a-z][a-z-]*)( (.+))?$`)
	usageFlagRE = regexp.MustCompile(`\[(--[a-z][a-z-]*)( ([^\]\s]+))?\]`)
)

// lint checks every line a command printed, on stdout and stderr.
func (w *walk) lint(cmd string, r testkit.Result) {
	t := w.t
	t.Helper()
	code := strings.Contains(cmd, "completion ") // shell code, where \n is the shell's
	for si, stream := range []string{r.Stdout, r.Stderr} {
		where := []string{"stdout", "stderr"}[si]
		if strings.Contains(cmd, "saga-lsp man") {
			stream = deroff(stream)
		}
		for n, line := range strings.Split(stream, "\n") {
			if escapedRE.MatchString(line) && !code {
				t.Errorf("%s, %s line %d shows an escaped tab or newline: %q", cmd, where, n+1, line)
			}
			if placeholderRE.MatchString(line) {
				t.Errorf("%s, %s line %d shows a stray placeholder: %q", cmd, where, n+1, line)
			}
			if !code && pluralRE.MatchString(line) {
				t.Errorf("%s, %s line %d puts a count's word in the wrong number: %q", cmd, where, n+1, line)
			}
		}
	}
	if strings.HasSuffix(cmd, "--help") {
		helpAgrees(t, cmd, r.Stdout+r.Stderr)
	}
}

// helpAgrees checks that a flag takes an argument in the flag list exactly
// when the synopsis shows it with one: a boolean flag has no placeholder.
func helpAgrees(t *testing.T, cmd, help string) {
	t.Helper()
	listed := map[string]string{}
	for _, line := range strings.Split(help, "\n") {
		if m := flagLineRE.FindStringSubmatch(line); m != nil {
			listed[m[1]] = m[3]
		}
	}
	if len(listed) == 0 {
		t.Errorf("%s lists no flags:\n%s", cmd, help)
	}
	for _, m := range usageFlagRE.FindAllStringSubmatch(help, -1) {
		arg, ok := listed[m[1]]
		if ok && (arg == "") != (m[3] == "") {
			t.Errorf("%s: the synopsis shows %s, the flag list %s", cmd, m[0], strings.TrimSpace(m[1]+" "+arg))
		}
	}
}

// deroff is a man page's roff as the text man shows: fonts and escapes out.
func deroff(s string) string {
	s = regexp.MustCompile(`\\f[BIRP]|\\&`).ReplaceAllString(s, "")
	s = strings.NewReplacer(`\-`, "-", `\[u2026]`, "…", `\(em`, "—", `\e`, `\`).Replace(s)
	return regexp.MustCompile(`(?m)^\.[A-Z]+ ?`).ReplaceAllString(s, "")
}

// goEnv is the test's clean environment with Go's caches pinned and its
// proxy off: a command that needed the network would fail, not fetch.
func goEnv(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	v := strings.Split(strings.TrimSpace(string(out)), "\n")
	env := slices.DeleteFunc(testkit.CleanEnv(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == "GOPROXY" || k == "GOMODCACHE" || k == "GOCACHE" || k == "GOPATH"
	})
	return append(env, "GOPROXY=off", "GOMODCACHE="+v[0], "GOCACHE="+v[1], "GOPATH="+v[2])
}
