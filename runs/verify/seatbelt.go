package verify

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

// On macOS a check is confined by Seatbelt, the way Claude Code confines
// its Bash there: sandbox-exec with a profile saga-lsp generates
// (docs/security.md#checks-on-macos). The profile is made here, on every
// system, so that its content is tested where CI runs (Linux); that
// macOS enforces it is not (docs/platforms.md#macos).
//
// It denies by default and allows back only what a build or a test needs:
// forking and executing, signals within the check, reading the filesystem
// but the credential stores, writing the worktree and the story's caches
// (and /dev/null) but git's and Claude Code's files there and the
// repository's git dir, and a few system services a process needs to
// start. There is no network rule, so no network at all — not the host's
// loopback, not a unix socket (connecting to one is network-outbound).

// seatbeltPaths is what a check's profile is made of: real paths (Seatbelt
// matches the resolved path: /tmp is /private/tmp on macOS).
type seatbeltPaths struct {
	Worktree string   // writable, but git's and Claude Code's files there
	Cache    string   // writable ("" when none)
	GitDir   string   // the repository's git dir: never writable
	Secrets  []string // credential stores: neither readable nor writable
}

// seatbeltServices are the only Mach services a check may look up: user
// and group lookups, logging, notifications. Not the keychain's
// (com.apple.SecurityServer), not launchd's or LaunchServices' (which
// would start programs outside the sandbox), not the pasteboard.
var seatbeltServices = []string{
	"com.apple.system.opendirectoryd.libinfo",
	"com.apple.system.logger",
	"com.apple.system.notification_center",
	"com.apple.diagnosticd",
	"com.apple.logd",
}

// macSecrets are macOS's own credential stores under a home, beside
// homeSecrets: the keychains and the browsers' and Claude's saved logins.
var macSecrets = []string{
	"Library/Keychains", "Library/Cookies", "Library/Application Support/Claude",
	"Library/Application Support/Google/Chrome", "Library/Application Support/Firefox", "Library/Safari",
}

// seatbelt renders the profile of p, the same text for the same paths.
func seatbelt(p seatbeltPaths) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(deny default)\n")
	b.WriteString("; the check's own processes\n")
	b.WriteString("(allow process-fork)\n(allow process-exec)\n")
	b.WriteString("(allow signal (target same-sandbox))\n(allow process-info* (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read)\n(allow ipc-posix-shm ipc-posix-sem)\n")
	b.WriteString("(allow mach-lookup")
	for _, s := range seatbeltServices {
		b.WriteString("\n  (global-name " + sbString(s) + ")")
	}
	b.WriteString(")\n")
	b.WriteString("; reads: everything but the credential stores (denied last)\n(allow file-read*)\n")
	b.WriteString("; writes: the worktree and the story's caches\n")
	writable := []string{p.Worktree}
	if p.Cache != "" {
		writable = append(writable, p.Cache)
	}
	b.WriteString("(allow file-write*")
	for _, w := range writable {
		b.WriteString("\n  (subpath " + sbString(w) + ")")
	}
	b.WriteString("\n  (literal \"/dev/null\") (literal \"/dev/dtracehelper\"))\n")
	b.WriteString("; never: git's and Claude Code's files in the worktree, the repository's git dir\n")
	protected := []string{filepath.Join(p.Worktree, ".git"), filepath.Join(p.Worktree, ".claude"), filepath.Join(p.Worktree, ".mcp.json")}
	if p.GitDir != "" {
		protected = append(protected, p.GitDir)
	}
	rule(&b, "deny file-write*", protected)
	// The credential stores last: a later rule wins, so a store inside the
	// worktree or a cache stays denied.
	b.WriteString("; never: the credential stores\n")
	rule(&b, "deny file-read* file-write*", p.Secrets)
	return b.String()
}

// rule writes one rule over the subpaths ps (none: no rule).
func rule(b *strings.Builder, what string, ps []string) {
	if len(ps) == 0 {
		return
	}
	b.WriteString("(" + what)
	for _, p := range ps {
		b.WriteString("\n  (subpath " + sbString(p) + ")")
	}
	b.WriteString(")\n")
}

// sbString quotes s as a profile's string literal.
func sbString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// seatbeltProfile is the profile confining a check in r.Dir; env is the
// environment its own is drawn from (it says where the home and the
// stores are).
func (r *Runner) seatbeltProfile(env map[string]string) string {
	p := seatbeltPaths{Worktree: realOrClean(r.Dir)}
	if r.Cache != "" {
		p.Cache = realOrClean(r.Cache)
	}
	if common, found, err := filesafe.GitCommonDir(r.Dir); err == nil && found {
		p.GitDir = realOrClean(common)
	}
	homes := []string{env["HOME"]}
	if home := passwdHome(); home != "" && home != env["HOME"] {
		homes = append(homes, home)
	}
	var secrets []string
	for _, h := range homes {
		if h == "" || !filepath.IsAbs(h) {
			continue
		}
		for _, s := range append(slices.Clone(homeSecrets), macSecrets...) {
			secrets = append(secrets, filepath.Join(h, s))
		}
	}
	for _, k := range envSecrets {
		for _, s := range filepath.SplitList(env[k]) {
			if filepath.IsAbs(s) {
				secrets = append(secrets, s)
			}
		}
	}
	secrets = append(secrets, "/Library/Keychains")
	for _, s := range secrets {
		// Both spellings: the one named, and the resolved one Seatbelt
		// matches when the store exists.
		p.Secrets = append(p.Secrets, filepath.Clean(s))
		if real := realOrClean(s); real != filepath.Clean(s) {
			p.Secrets = append(p.Secrets, real)
		}
	}
	return seatbelt(p)
}

// realOrClean is p with its links resolved, or cleaned when it does not
// exist (yet).
func realOrClean(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}
