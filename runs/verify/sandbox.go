package verify

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// What a confined check sees (docs/security.md#checks-confined-like-the-agents-bash).
// bubblewrap gives it its own user namespace with no capabilities, even as
// root, and its own pid, network (loopback only), IPC and UTS namespaces.
// The host's filesystem is read-only, and the places where unix sockets of
// the host live or where the user keeps credentials are replaced:
//
//   - /tmp and /var/tmp: an empty private tmpfs, writable (tmux's, X11's and
//     ssh-agent's sockets are there);
//   - /run (and /var/run): empty and read-only (the user's runtime dir with
//     D-Bus, gpg-agent, ssh-agent, Wayland, and the system's D-Bus, Docker
//     and systemd sockets);
//   - the directories named by $XDG_RUNTIME_DIR, $TMUX_TMPDIR and
//     $SCREENDIR, and the sockets the environment names ($SSH_AUTH_SOCK,
//     $TMUX, the D-Bus addresses, …) wherever they are: their directory is
//     emptied, or where that would hide too much, the socket itself;
//   - the credential stores of $HOME (and of the passwd entry's home):
//     directories emptied, files made unreadable.
//
// Toolchains keep working: what the environment names that the above would
// hide (PATH entries, GOROOT, GOMODCACHE, HOME itself, …, and the
// repository's git dir) is bound back read-only before the credential
// stores are hidden. The worktree and the story's caches stay writable;
// git's and Claude Code's files in the worktree stay read-only.

// homeSecrets are the credential stores under a home directory.
var homeSecrets = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".claude", ".claude.json",
	".config/gh", ".config/hub", ".config/gcloud", ".config/op", ".config/containers",
	".config/git/credentials", ".git-credentials", ".netrc", ".npmrc", ".pypirc", ".yarnrc.yml",
	".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".terraform.d/credentials.tfrc.json",
	".vault-token", ".password-store", ".local/share/keyrings", ".1password", ".bitwarden-ssh-agent.sock",
}

// envSecrets are the variables naming credential stores elsewhere (lists
// separated by ':' where the tool takes one).
var envSecrets = []string{
	"GNUPGHOME", "CLAUDE_CONFIG_DIR", "DOCKER_CONFIG", "KUBECONFIG", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
	"GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG", "NETRC", "GH_CONFIG_DIR", "AZURE_CONFIG_DIR", "PASSWORD_STORE_DIR",
	"REGISTRY_AUTH_FILE", "XAUTHORITY", "ICEAUTHORITY",
}

// envSockets are the variables naming a socket by its path, alone or after
// a prefix: terminals, editors, agents and servers that run commands or
// sign for whoever connects.
var envSockets = []string{
	"SSH_AUTH_SOCK", "WEZTERM_UNIX_SOCKET", "NVIM", "NVIM_LISTEN_ADDRESS", "SWAYSOCK", "I3SOCK",
	"VSCODE_IPC_HOOK", "VSCODE_IPC_HOOK_CLI", "VSCODE_GIT_IPC_HANDLE", "ALACRITTY_SOCKET", "EMACS_SOCKET_NAME",
	"DOCKER_HOST", "PULSE_SERVER", "KITTY_LISTEN_ON", "WAYLAND_DISPLAY", "TMUX", "GPG_AGENT_INFO",
	"DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS",
}

// envToolDirs are the variables naming toolchain directories (lists
// separated by ':'), bound back when a hidden place holds them.
var envToolDirs = []string{
	"PATH", "HOME", "GOROOT", "GOPATH", "GOMODCACHE", "PYENV_ROOT", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH",
	"NVM_DIR", "NODE_PATH", "CARGO_HOME", "RUSTUP_HOME", "JAVA_HOME", "GRADLE_USER_HOME", "LD_LIBRARY_PATH",
}

// layout builds the bubblewrap arguments of a check's filesystem.
type layout struct {
	args     []string
	hidden   []string // real paths of the directories replaced by a tmpfs
	roots    []string // of those, the ones hidden wholesale (temp and runtime dirs)
	readOnly []string // of those, the ones remounted read-only at the end
	files    []string // real paths of the files and sockets covered by /dev/null
}

// sandboxArgs are the bubblewrap arguments confining a check in r.Dir, up
// to and without the command; env is the environment the check's own is
// drawn from (it also says where sockets and stores are); view are the
// binds of the protected run's view (view.go), put over the worktree.
func (r *Runner) sandboxArgs(env map[string]string, view []string) []string {
	l := &layout{args: []string{"--new-session", "--die-with-parent",
		"--unshare-user", "--cap-drop", "ALL", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}}
	for _, d := range []string{"/tmp", "/var/tmp"} {
		l.hideDir(d, true, true)
	}
	for _, d := range []string{"/run", "/var/run"} {
		l.hideDir(d, false, true)
	}
	runtime := []string{env["XDG_RUNTIME_DIR"], env["SCREENDIR"]}
	if t := env["TMUX_TMPDIR"]; t != "" {
		runtime = append(runtime, filepath.Join(t, "tmux-"+strconv.Itoa(os.Getuid())))
	}
	for _, d := range runtime {
		l.hideDir(d, false, true)
	}
	// What the checks need from the hidden places, back read-only; the
	// stores and sockets inside are hidden after.
	needed := r.needed(env)
	for _, d := range needed {
		real, _ := filepath.EvalSymlinks(d)
		if l.coveredStrictly(d) {
			l.args = append(l.args, "--ro-bind", real, d)
		}
		if real != d && l.coveredStrictly(real) {
			l.args = append(l.args, "--ro-bind", real, real)
		}
	}
	// The saga-lsp serving the warm Go cache, alone (a test's may be in
	// /tmp).
	if p := r.Warm.Prog; p != "" {
		if real, err := filepath.EvalSymlinks(p); err == nil && l.coveredStrictly(real) {
			l.args = append(l.args, "--ro-bind", real, real)
		}
	}
	keep := append([]string{r.Dir, r.Cache, env["HOME"]}, needed...)
	for _, s := range socketPaths(env) {
		l.hideSocket(s, keep)
	}
	homes := []string{env["HOME"]}
	if home := passwdHome(); home != "" && home != env["HOME"] {
		homes = append(homes, home)
	}
	for _, h := range homes {
		if h == "" || !filepath.IsAbs(h) {
			continue
		}
		for _, s := range homeSecrets {
			l.hideAny(filepath.Join(h, s))
		}
	}
	for _, k := range envSecrets {
		for _, p := range filepath.SplitList(env[k]) {
			l.hideAny(p)
		}
	}
	l.args = append(l.args, "--bind", r.Dir, r.Dir)
	l.args = append(l.args, view...)
	// What would change the agent's powers or the user's later commands
	// stays read-only even inside the worktree: git's own files and Claude
	// Code's configuration.
	for _, n := range []string{".git", ".claude", ".mcp.json"} {
		if p := filepath.Join(r.Dir, n); exists(p) {
			l.args = append(l.args, "--ro-bind", p, p)
		}
	}
	// The cache after those, so that no read-only bind covers it (caches
	// of the previous version lived in the repository's git dir).
	if r.Cache != "" {
		l.args = append(l.args, "--bind", r.Cache, r.Cache)
	}
	for _, d := range l.readOnly {
		l.args = append(l.args, "--remount-ro", d)
	}
	return append(l.args, "--chdir", r.Dir)
}

// needed are the directories (clean absolute paths, as named) a check may
// need that a hidden place could hold: the toolchains the environment
// names, the warm Go cache (runs.Warm), and the repository's git dir. The
// worktree's .git file says where that is, and the agent can write it:
// only a ".git" beside the worktree or above it counts, never a place the
// agent chose.
func (r *Runner) needed(env map[string]string) []string {
	var out []string
	for _, k := range envToolDirs {
		for _, p := range filepath.SplitList(env[k]) {
			if filepath.IsAbs(p) {
				out = append(out, filepath.Clean(p))
			}
		}
	}
	if r.Warm.Go != "" {
		out = append(out, filepath.Clean(r.Warm.Go))
	}
	if common, found, err := store.GitCommonDir(r.Dir); err == nil && found && filepath.Base(common) == ".git" {
		if top := filepath.Dir(common); realDir(r.Dir) == top || under(realDir(r.Dir), top) {
			out = append(out, common)
		}
	}
	var dirs []string
	for _, p := range out {
		if isDir(p) && !slices.Contains(dirs, p) {
			dirs = append(dirs, p)
		}
	}
	return dirs
}

// hideDir replaces the directory p (when it exists) with an empty tmpfs;
// root marks a place hidden wholesale, whose contents only come back as
// needed (layout.coveredStrictly).
func (l *layout) hideDir(p string, writable, root bool) {
	real := realDir(p)
	if real == "" || real == "/" || l.covered(real) {
		return
	}
	l.args = append(l.args, "--tmpfs", real)
	l.hidden = append(l.hidden, real)
	if root {
		l.roots = append(l.roots, real)
	}
	if !writable {
		l.readOnly = append(l.readOnly, real)
	}
}

// hideAny hides a credential store: a directory is emptied, a file (or
// socket) covered by /dev/null, which reads as permission denied.
func (l *layout) hideAny(p string) {
	if !filepath.IsAbs(p) {
		return
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil || l.covered(real) || slices.Contains(l.files, real) {
		return
	}
	if isDir(real) {
		l.hideDir(real, false, false)
		return
	}
	l.args = append(l.args, "--ro-bind", os.DevNull, real)
	l.files = append(l.files, real)
}

// hideSocket makes the socket at p unreachable: its directory is emptied,
// unless that would hide one of keep (or a place above them), when the
// socket alone is covered.
func (l *layout) hideSocket(p string, keep []string) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil || l.covered(real) {
		return
	}
	dir := filepath.Dir(real)
	for _, k := range keep {
		if k != "" && (dir == "/" || k == dir || under(k, dir)) {
			l.hideAny(real)
			return
		}
	}
	l.hideDir(dir, false, false)
}

// covered tells whether p is, or is inside, a place already hidden.
func (l *layout) covered(p string) bool {
	if slices.Contains(l.files, p) {
		return true
	}
	for _, h := range l.hidden {
		if p == h || under(p, h) {
			return true
		}
	}
	return false
}

// coveredStrictly tells whether p lies inside (not at) a place hidden
// wholesale, and so may be bound back.
func (l *layout) coveredStrictly(p string) bool {
	for _, h := range l.roots {
		if under(p, h) {
			return true
		}
	}
	return false
}

// socketPaths are the absolute socket paths the environment names.
func socketPaths(env map[string]string) []string {
	var out []string
	for _, k := range envSockets {
		v := env[k]
		switch k {
		case "TMUX":
			v, _, _ = strings.Cut(v, ",")
		case "GPG_AGENT_INFO":
			v, _, _ = strings.Cut(v, ":")
		case "DOCKER_HOST":
			v = strings.TrimPrefix(v, "unix://")
		case "PULSE_SERVER", "KITTY_LISTEN_ON":
			v = strings.TrimPrefix(v, "unix:")
		case "WAYLAND_DISPLAY":
			if v != "" && !filepath.IsAbs(v) && env["XDG_RUNTIME_DIR"] != "" {
				v = filepath.Join(env["XDG_RUNTIME_DIR"], v)
			}
		case "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS":
			for _, addr := range strings.Split(v, ";") {
				rest, ok := strings.CutPrefix(addr, "unix:")
				if !ok {
					continue
				}
				for _, kv := range strings.Split(rest, ",") {
					if p, ok := strings.CutPrefix(kv, "path="); ok && filepath.IsAbs(p) {
						out = append(out, p)
					}
				}
			}
			continue
		}
		if filepath.IsAbs(v) {
			out = append(out, v)
		}
	}
	return out
}

// Environment: an allow-list. A check gets what toolchains need to find
// themselves and behave, never what authenticates (API keys, tokens, agent
// sockets, proxies with credentials): see docs/security.md.

// envAllowed are the variables a check keeps (beside LC_* and CGO_*).
var envAllowed = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "CI",
	"GOROOT", "GOPATH", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOEXPERIMENT", "GOOS", "GOARCH", "GOAMD64", "GOARM", "GOARM64",
	"GO386", "GOPPC64", "GORISCV64", "GOWASM", "GOMIPS", "GOMIPS64", "GODEBUG", "GOGC", "GOMAXPROCS", "GOMEMLIMIT", "GOENV",
	"GOWORK", "GOPRIVATE", "GONOSUMDB", "GONOPROXY", "GOINSECURE",
	"CC", "CXX", "AR", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "PKG_CONFIG", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH",
	"NODE_PATH", "NODE_OPTIONS", "NODE_ENV", "NVM_DIR", "NVM_BIN", "NVM_INC",
	"PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONHASHSEED", "PYTHONWARNINGS", "PYTHONUTF8",
	"VIRTUAL_ENV", "PYENV_ROOT", "PYENV_VERSION", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS", "JAVA_HOME", "GRADLE_USER_HOME",
}

// checkEnv is a check's environment: the allowed variables of src, the
// story's caches (TMPDIR inside them) warm from warm, and for a confined
// check GOPROXY=off — there is no network, so a module missing from the module
// cache fails at once, naming the module, instead of after a timeout.
func checkEnv(src []string, cache string, warm runs.Warm, confined bool) []string {
	var env []string
	for _, kv := range src {
		k, _, ok := strings.Cut(kv, "=")
		if ok && (slices.Contains(envAllowed, k) || strings.HasPrefix(k, "LC_") || strings.HasPrefix(k, "CGO_")) {
			env = append(env, kv)
		}
	}
	if cache != "" {
		env = append(env, runs.CacheEnv(cache, warm)...)
		env = append(env, "TMPDIR="+filepath.Join(cache, "tmp"))
	}
	if confined {
		env = append(env, "GOPROXY=off")
	}
	return env
}

// envMap indexes KEY=value pairs; a later pair wins.
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// passwdHome is the user's home directory as the passwd file says, which
// $HOME may not (sudo, tests): its stores are hidden too.
func passwdHome() string {
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil {
		return ""
	}
	return u.HomeDir
}

// under tells whether p lies strictly inside dir (both clean and absolute).
func under(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// realDir is p with its symlinks resolved when it is an existing
// directory, else "".
func realDir(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil || !isDir(real) {
		return ""
	}
	return real
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
