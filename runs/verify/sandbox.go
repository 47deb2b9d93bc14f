package verify

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
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
// repository's git dir) is bound back read-only; the credential stores and
// sockets are hidden after, at every path a bind shows them (a HOME under
// /tmp bound back keeps its stores hidden). The worktree and the story's
// caches stay writable; git's and Claude Code's files in the worktree stay
// read-only.

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

// layout builds the bubblewrap arguments of a check's filesystem, and
// keeps the mounts it made, in order, to tell what each path of the
// sandbox shows: a place hidden is hidden wherever the host's tree shows
// through a bind (HOME bound back out of a hidden /tmp, the worktree, …),
// whatever binds came before.
type layout struct {
	args     []string
	mounts   []mount
	readOnly []string // the tmpfs mounts remounted read-only at the end
}

// mount is one mount of the sandbox: at dst, the host's src (a bind), or
// nothing of the host (src "": a tmpfs, or /dev/null over a file).
type mount struct{ dst, src string }

// sandboxArgs are the bubblewrap arguments confining a check in r.Dir, up
// to and without the command; env is the environment the check's own is
// drawn from (it also says where sockets and stores are); view are the
// binds of the protected run's view (view.go), put over the worktree.
func (r *Runner) sandboxArgs(env map[string]string, view []string) []string {
	l := &layout{args: []string{"--new-session", "--die-with-parent",
		"--unshare-user", "--cap-drop", "ALL", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"},
		mounts: []mount{{"/", "/"}}}
	// The places hidden wholesale, and what the checks need from them back
	// read-only, shallowest first: a temp or runtime dir inside a place
	// bound back (a HOME under /tmp holding $XDG_RUNTIME_DIR) is hidden
	// there again, and what is needed from it bound back in turn.
	var steps []step
	for _, d := range []string{"/tmp", "/var/tmp"} {
		steps = append(steps, step{path: d, hide: true, writable: true})
	}
	runtime := []string{"/run", "/var/run", env["XDG_RUNTIME_DIR"], env["SCREENDIR"]}
	if t := env["TMUX_TMPDIR"]; t != "" {
		runtime = append(runtime, filepath.Join(t, "tmux-"+strconv.Itoa(os.Getuid())))
	}
	for _, d := range runtime {
		steps = append(steps, step{path: d, hide: true})
	}
	needed := r.needed(env)
	for _, d := range needed {
		steps = append(steps, step{path: d})
		if real, err := filepath.EvalSymlinks(d); err == nil && real != d {
			steps = append(steps, step{path: real})
		}
	}
	// The saga-lsp serving the warm Go cache, alone (a test's may be in
	// /tmp).
	if p := r.Warm.Prog; p != "" {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			steps = append(steps, step{path: real})
		}
	}
	// Stable: at one depth what is needed comes first, so that a place
	// both needed and hidden wholesale stays hidden.
	slices.SortStableFunc(steps, func(a, b step) int { return depth(a.path) - depth(b.path) })
	for _, s := range steps {
		if s.hide {
			if real := realDir(s.path); real != "" && real != "/" {
				l.hideEverywhere(real, true, s.writable)
			}
		} else {
			l.bindBack(s.path)
		}
	}
	l.bind("--bind", r.Dir, r.Dir)
	for i := 0; i+2 < len(view); i += 3 {
		l.bind(view[i], view[i+1], view[i+2])
	}
	// What would change the agent's powers or the user's later commands
	// stays read-only even inside the worktree: git's own files and Claude
	// Code's configuration.
	for _, n := range []string{".git", ".claude", ".mcp.json"} {
		if p := filepath.Join(r.Dir, n); exists(p) {
			l.bind("--ro-bind", p, p)
		}
	}
	// The cache after those, so that no read-only bind covers it (caches
	// of the previous version lived in the repository's git dir).
	if r.Cache != "" {
		l.bind("--bind", r.Cache, r.Cache)
	}
	// The sockets and the credential stores last, hidden wherever a bind
	// above shows them.
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
	for _, d := range l.readOnly {
		l.args = append(l.args, "--remount-ro", d)
	}
	return append(l.args, "--chdir", r.Dir)
}

// step is a place hidden wholesale (hide) or one bound back when hidden.
type step struct {
	path           string
	hide, writable bool
}

// needed are the directories (clean absolute paths, as named) a check may
// need that a hidden place could hold: the toolchains the environment
// names, the warm Go cache (buildcache.Warm), and the repository's git dir. The
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
	if common, found, err := filesafe.GitCommonDir(r.Dir); err == nil && found && filepath.Base(common) == ".git" {
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

// bind binds the host's src at dst (how: --bind or --ro-bind).
func (l *layout) bind(how, src, dst string) {
	l.args = append(l.args, how, src, dst)
	if real, err := filepath.EvalSymlinks(src); err == nil {
		src = real
	}
	l.mounts = append(l.mounts, mount{dst: filepath.Clean(dst), src: src})
}

// bindBack binds p (a path as named, or a real one) back read-only where
// a place hidden wholesale holds it — inside it, not at it.
func (l *layout) bindBack(p string) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return
	}
	if m := l.at(p); m.src == "" && m.dst != p {
		l.bind("--ro-bind", real, p)
	}
}

// at is the mount that shows the sandbox's path p: the last one made at
// p or above it.
func (l *layout) at(p string) mount {
	for i := len(l.mounts) - 1; i >= 0; i-- {
		if m := l.mounts[i]; p == m.dst || under(p, m.dst) {
			return m
		}
	}
	return mount{}
}

// views are the sandbox's paths where the host's real path p shows.
func (l *layout) views(p string) []string {
	var out []string
	for _, m := range l.mounts {
		if m.src == "" || (p != m.src && !under(p, m.src)) {
			continue
		}
		v := filepath.Join(m.dst, strings.TrimPrefix(p, m.src))
		if s := l.at(v); s.src != "" && filepath.Join(s.src, strings.TrimPrefix(v, s.dst)) == p && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// hideEverywhere hides the host's real path p wherever the sandbox shows
// it: a directory is replaced with an empty tmpfs (read-only unless
// writable), a file (or socket) covered by /dev/null, which reads as
// permission denied.
func (l *layout) hideEverywhere(p string, dir, writable bool) {
	for _, v := range l.views(p) {
		if dir {
			l.args = append(l.args, "--tmpfs", v)
			if !writable {
				l.readOnly = append(l.readOnly, v)
			}
		} else {
			l.args = append(l.args, "--ro-bind", os.DevNull, v)
		}
		l.mounts = append(l.mounts, mount{dst: v})
	}
}

// hideAny hides a credential store, a directory or a file.
func (l *layout) hideAny(p string) {
	if !filepath.IsAbs(p) {
		return
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		l.hideEverywhere(real, isDir(real), false)
	}
}

// hideSocket makes the socket at p unreachable: its directory is emptied,
// unless that would hide one of keep (or a place above them), when the
// socket alone is covered.
func (l *layout) hideSocket(p string, keep []string) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return
	}
	dir := filepath.Dir(real)
	for _, k := range keep {
		if k != "" && (dir == "/" || k == dir || under(k, dir)) {
			l.hideEverywhere(real, false, false)
			return
		}
	}
	l.hideEverywhere(dir, true, false)
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
func checkEnv(src []string, cache string, warm buildcache.Warm, confined bool) []string {
	var env []string
	for _, kv := range src {
		k, _, ok := strings.Cut(kv, "=")
		if ok && (slices.Contains(envAllowed, k) || strings.HasPrefix(k, "LC_") || strings.HasPrefix(k, "CGO_")) {
			env = append(env, kv)
		}
	}
	if cache != "" {
		env = append(env, buildcache.CacheEnv(cache, warm)...)
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
