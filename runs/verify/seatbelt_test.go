package verify

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// The macOS profile is tested here by its content: golden, and each class
// of confinement attack (docs/security.md#checks-confined-like-the-agents-bash)
// judged by reading the profile the way Seatbelt does — deny by default,
// the last matching rule wins. That macOS enforces it is not tested in CI
// (docs/platforms.md#macos).

// storyPaths are a story's paths on a Mac: its worktree inside the main
// checkout, as the worker makes it.
var storyPaths = seatbeltPaths{
	Worktree: "/Users/u/src/shop/.saga/worktrees/shop--cart",
	Cache:    "/Users/u/Library/Caches/saga-lsp/shop/agent/shop--cart",
	GitDir:   "/Users/u/src/shop/.git",
	Secrets:  []string{"/Users/u/.ssh", "/Users/u/.aws", "/Users/u/.config/gh", "/Users/u/Library/Keychains", "/Library/Keychains", "/opt/creds/gnupg"},
}

func TestSeatbeltProfileGolden(t *testing.T) {
	testkit.Golden(t, filepath.Join("testdata", "seatbelt", "story.sb"), seatbelt(storyPaths))
	// verify in the main checkout: the git dir is inside the worktree.
	main := seatbeltPaths{Worktree: "/Users/u/src/shop", GitDir: "/Users/u/src/shop/.git", Secrets: storyPaths.Secrets}
	testkit.Golden(t, filepath.Join("testdata", "seatbelt", "checkout.sb"), seatbelt(main))
}

func TestSeatbeltProfileAttacks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		paths     seatbeltPaths
		storeOnly bool // the worktree is the home: only its stores are checked
	}{
		{"worktree", storyPaths, false},
		{"main checkout", seatbeltPaths{Worktree: "/Users/u/src/shop", GitDir: "/Users/u/src/shop/.git", Secrets: storyPaths.Secrets}, false},
		{"a store inside the worktree", seatbeltPaths{Worktree: "/Users/u", Secrets: []string{"/Users/u/.ssh"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parseProfile(t, seatbelt(tc.paths))
			wt, gd := tc.paths.Worktree, tc.paths.GitDir
			type access struct {
				op, arg string
				allow   bool
			}
			cases := []access{
				// What a build and its tests need.
				{"file-write-create", wt + "/main_test.go", true},
				{"file-read-data", "/usr/lib/libSystem.B.dylib", true},
				{"file-write-data", "/dev/null", true},
				{"process-fork", "", true},
				{"process-exec", "/usr/bin/make", true},
				{"mach-lookup", "com.apple.system.opendirectoryd.libinfo", true},
				// No writes outside the worktree and the caches.
				{"file-write-create", "/private/tmp/x", false},
				{"file-write-data", "/Users/u/.zshrc", false},
				{"file-write-create", "/Users/u/src/other/x", false},
				{"file-write-unlink", "/Users/u/Library/Caches/saga-lsp/shop/agent/other/x", false},
				// Git's and Claude Code's files, the git dir, saga-lsp's
				// state (run records and locks live in the git dir).
				{"file-write-data", wt + "/.git", false},
				{"file-write-create", wt + "/.git/hooks/pre-commit", false},
				{"file-write-create", wt + "/.claude/settings.json", false},
				{"file-write-data", wt + "/.mcp.json", false},
				// No network: not the host's loopback, not a unix socket.
				{"network-outbound", "127.0.0.1:22", false},
				{"network-outbound", "/private/tmp/tmux-501/default", false},
				{"network-bind", "localhost:8080", false},
				{"network-inbound", "*:*", false},
				// No credential store; the keychain's service neither.
				{"file-read-data", "/Users/u/.ssh/id_ed25519", false},
				{"file-write-data", "/Users/u/.ssh/authorized_keys", false},
				{"mach-lookup", "com.apple.SecurityServer", false},
				{"mach-lookup", "com.apple.coreservices.launchservicesd", false},
			}
			if tc.storeOnly {
				cases = nil
			}
			if gd != "" {
				cases = append(cases,
					access{"file-write-data", gd + "/refs/heads/main", false},
					access{"file-write-data", gd + "/packed-refs", false},
					access{"file-write-create", gd + "/saga-lsp/locks/worker-shop--cart.lock", false},
					access{"file-write-create", gd + "/saga-lsp/runs/shop--cart.json", false},
					access{"file-write-create", gd + "/objects/info/alternates", false})
			}
			if tc.paths.Cache != "" {
				cases = append(cases, access{"file-write-create", tc.paths.Cache + "/go-build/00/x", true})
			}
			for _, s := range tc.paths.Secrets {
				cases = append(cases, access{"file-read-data", s + "/x", false}, access{"file-read-data", s, false})
			}
			for _, c := range cases {
				if got := p.allows(c.op, c.arg); got != c.allow {
					t.Errorf("%s %s: allowed %v, want %v", c.op, c.arg, got, c.allow)
				}
			}
		})
	}
}

// TestSeatbeltProfileOfRunner: the profile a Runner makes names the real
// paths (Seatbelt matches resolved paths), the stores the environment
// names, and the stores of the home.
func TestSeatbeltProfileOfRunner(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "wt")
	testkit.WriteFiles(t, dir, map[string]string{"wt/go.mod": "module x\n"})
	if err := os.Symlink(filepath.Join(dir, "wt"), link); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	r := &Runner{Dir: link, Cache: filepath.Join(dir, "cache")}
	profile := r.seatbeltProfile(map[string]string{"HOME": home, "GNUPGHOME": "/opt/gpg", "KUBECONFIG": "/a/k1:/b/k2"})
	p := parseProfile(t, profile)
	real, _ := filepath.EvalSymlinks(filepath.Join(dir, "wt"))
	for _, c := range []struct {
		op, arg string
		allow   bool
	}{
		{"file-write-create", real + "/x", true},
		{"file-write-create", filepath.Join(dir, "cache", "x"), true},
		{"file-read-data", "/opt/gpg/private-keys-v1.d/k", false},
		{"file-read-data", "/b/k2", false},
		{"file-read-data", home + "/.ssh/id_rsa", false},
		{"file-read-data", home + "/Library/Keychains/login.keychain-db", false},
		{"file-read-data", home + "/.claude.json", false},
		{"file-read-data", home + "/go/pkg/mod/x", true},
	} {
		if got := p.allows(c.op, c.arg); got != c.allow {
			t.Errorf("%s %s: allowed %v, want %v\n%s", c.op, c.arg, got, c.allow, profile)
		}
	}
}

// sbRule is one (allow|deny op… filter…) of a profile.
type sbRule struct {
	allow   bool
	ops     []string
	filters [][2]string // kind, argument
}

type sbProfile struct{ rules []sbRule }

// parseProfile reads the rules of a profile; anything else in it fails
// the test, so a rule this reader would not understand cannot pass.
func parseProfile(t *testing.T, text string) sbProfile {
	t.Helper()
	var p sbProfile
	for _, form := range sexprs(t, text) {
		list, ok := form.([]any)
		if !ok || len(list) == 0 {
			t.Fatalf("unexpected form %v", form)
		}
		head, _ := list[0].(string)
		switch head {
		case "version":
			continue
		case "allow", "deny":
		default:
			t.Fatalf("unexpected form %v", list)
		}
		r := sbRule{allow: head == "allow"}
		for _, x := range list[1:] {
			switch x := x.(type) {
			case string:
				r.ops = append(r.ops, x)
			case []any:
				kind, _ := x[0].(string)
				arg, _ := x[1].(string)
				switch kind {
				case "subpath", "literal", "global-name", "target":
				default:
					t.Fatalf("filter %v is not read by this test", x)
				}
				r.filters = append(r.filters, [2]string{kind, arg})
			}
		}
		p.rules = append(p.rules, r)
	}
	return p
}

// allows says whether op on arg (a path, a Mach service name) is allowed:
// the last rule matching decides, "default" matching every op.
func (p sbProfile) allows(op, arg string) bool {
	allowed := false
	for _, r := range p.rules {
		if !slices.ContainsFunc(r.ops, func(o string) bool { return sbOpMatches(o, op) }) {
			continue
		}
		if len(r.filters) > 0 && !slices.ContainsFunc(r.filters, func(f [2]string) bool { return sbFilterMatches(f, arg) }) {
			continue
		}
		allowed = r.allow
	}
	return allowed
}

func sbOpMatches(rule, op string) bool {
	if rule == "default" || rule == op {
		return true
	}
	prefix, wild := strings.CutSuffix(rule, "*")
	return wild && strings.HasPrefix(op, prefix)
}

func sbFilterMatches(f [2]string, arg string) bool {
	switch f[0] {
	case "subpath":
		return arg == f[1] || strings.HasPrefix(arg, strings.TrimSuffix(f[1], "/")+"/")
	case "literal", "global-name":
		return arg == f[1]
	case "target":
		return true // same-sandbox: signals and process info within the check
	}
	return false
}

// sexprs parses text into lists ([]any), symbols and strings (string).
func sexprs(t *testing.T, text string) []any {
	t.Helper()
	var stack [][]any
	var top []any
	push := func(x any) {
		if len(stack) == 0 {
			top = append(top, x)
		} else {
			stack[len(stack)-1] = append(stack[len(stack)-1], x)
		}
	}
	for i := 0; i < len(text); {
		switch c := text[i]; {
		case c == ';':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\n' || c == '\t':
			i++
		case c == '(':
			stack = append(stack, nil)
			i++
		case c == ')':
			if len(stack) == 0 {
				t.Fatalf("unbalanced ) at %d", i)
			}
			l := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			push(l)
			i++
		case c == '"':
			var b strings.Builder
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
				b.WriteByte(text[i])
			}
			push(b.String())
			i++
		default:
			j := i
			for j < len(text) && !strings.ContainsRune(" \n\t()", rune(text[j])) {
				j++
			}
			push(text[i:j])
			i = j
		}
	}
	if len(stack) != 0 {
		t.Fatal("unbalanced (")
	}
	return top
}
