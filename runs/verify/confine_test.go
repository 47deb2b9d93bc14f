package verify_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
)

// Issue 22, item 2: a check runs code the agent wrote, so it must not reach
// what the agent's Bash cannot — the user's tmux server, the network, the
// host's sockets, the credential stores, the environment's secrets — nor
// keep capabilities as root, nor use unbounded resources. Every test here
// runs real checks under the real bubblewrap against real listeners, files
// and processes of the host.

// box is a worktree with its caches and a home holding credential stores,
// in a directory outside every place a check's sandbox hides wholesale
// (/tmp, /var/tmp, /run): what the checks must not reach there is hidden
// by the sandbox's own rules, not by the location.
type box struct {
	base, wt, cache, home string
	env                   []string // the environment the checks' is drawn from
}

func newBox(t *testing.T) *box {
	t.Helper()
	testkit.Bwrap(t)
	base := testkit.HostDir(t)
	b := &box{base: base, wt: filepath.Join(base, "repo"), cache: filepath.Join(base, "cache"), home: filepath.Join(base, "home")}
	testkit.WriteFiles(t, b.wt, map[string]string{"README": "a worktree\n"})
	testkit.InitRepo(t, b.wt)
	if err := os.MkdirAll(filepath.Join(b.cache, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(b.home, 0o755); err != nil {
		t.Fatal(err)
	}
	b.env = append(testkit.CleanEnv(), "HOME="+b.home)
	return b
}

// runner is a Runner for the box's worktree, drawing on the box's env.
func (b *box) runner(t *testing.T) *verify.Runner {
	t.Helper()
	r := verify.NewRunner(context.Background(), b.wt, b.cache, verify.Policy{})
	if r.Mode != verify.Confined {
		t.Fatalf("mode %s: %s", r.Mode, r.Why)
	}
	r.Env = b.env
	return r
}

// run runs one check with the default limits.
func (b *box) run(t *testing.T, command string) verify.Result {
	t.Helper()
	return b.runLimited(t, command, time.Minute, store.CheckLimits{})
}

func (b *box) runLimited(t *testing.T, command string, timeout time.Duration, l store.CheckLimits) verify.Result {
	t.Helper()
	res := b.runner(t).RunLimited(context.Background(), command, timeout, l)
	t.Logf("%s → %s (%s)\n%s", command, res.Outcome(), res.Duration.Round(time.Millisecond), res.Output)
	return res
}

// python3 skips the test without python3, whose socket module the checks
// use to try connections.
func python3(t *testing.T) {
	t.Helper()
	testkit.NeedsTool(t, "python3", "")
}

// connectPy tries each connection named on its command line (unix:PATH,
// unix:@ABSTRACT, tcp:HOST:PORT) and prints "NAME connected" or "NAME
// unreachable: why".
const connectPy = `import socket, sys
for arg in sys.argv[1:]:
    name, kind, addr = arg.split("=", 1)[0], *arg.split("=", 1)[1].split(":", 1)
    try:
        if kind == "unix":
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(3)
            s.connect("\0" + addr[1:] if addr.startswith("@") else addr)
        else:
            host, port = addr.rsplit(":", 1)
            s = socket.create_connection((host, int(port)), timeout=3)
        print(name, "connected")
    except Exception as e:
        print(name, "unreachable:", e)
`

// listen serves a unix socket (an abstract one for "@name") or TCP on
// 127.0.0.1 until the test ends; accepted tells whether anything
// connected.
func listen(t *testing.T, network, addr string) (l net.Listener, accepted func() bool) {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("listen %s %s: %v", network, addr, err)
	}
	t.Cleanup(func() { l.Close() })
	return l, func() bool {
		// A connection the check made waits in the backlog.
		l.(interface{ SetDeadline(time.Time) error }).SetDeadline(time.Now().Add(100 * time.Millisecond))
		c, err := l.Accept()
		if err == nil {
			c.Close()
		}
		return err == nil
	}
}

// mkdirs creates dir and the parents it lacks, removing what it created
// when the test ends.
func mkdirs(t *testing.T, dir string) error {
	t.Helper()
	var made []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	t.Cleanup(func() {
		for _, d := range made {
			os.RemoveAll(d)
		}
	})
	return nil
}

// Attack 2: a check (or a script it runs, which the agent edits) asks the
// user's tmux server to run a command — by the socket's name, its path, or
// $TMUX. Without the sandbox's private /tmp the server runs it, unconfined.
func TestCheckCannotDriveTheUsersTmuxServer(t *testing.T) {
	b := newBox(t)
	sock := testkit.TmuxServer(t)
	tmux := exec.Command("tmux", "-L", sock, "new-session", "-d", "-s", "main", "sleep 600")
	tmux.Env = testkit.CleanEnv()
	if out, err := tmux.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	tmpdir := os.Getenv("TMUX_TMPDIR")
	if tmpdir == "" {
		tmpdir = "/tmp"
	}
	path := filepath.Join(tmpdir, "tmux-"+strconv.Itoa(os.Getuid()), sock)
	b.env = append(b.env, "TMUX="+path+",1,0")
	escaped := filepath.Join(b.base, "ran-by-tmux")
	res := b.run(t, fmt.Sprintf(`tmux -L %s run-shell "touch %s-L"; echo "by name: $?"
tmux -S %s run-shell "touch %s-S"; echo "by path: $?"
tmux run-shell "touch %s-env"; echo "by TMUX: $?"
tmux -L %s new-session -d "touch %s-new; tmux -L %s wait-for -S done" && tmux -L %s wait-for done`, sock, escaped, path, escaped, escaped, sock, escaped, sock, sock))
	for _, how := range []string{"by name: 1", "by path: 1", "by TMUX: 1"} {
		if !strings.Contains(res.Output, how) {
			t.Errorf("the check reached the tmux server (want %q):\n%s", how, res.Output)
		}
	}
	// run-shell waits for its command, and the check waited for the new
	// session's: had the server run them, the files would be there.
	for _, suffix := range []string{"-L", "-S", "-env", "-new"} {
		if _, err := os.Stat(escaped + suffix); err == nil {
			t.Errorf("the user's tmux server ran the check's command (%s)", escaped+suffix)
		}
	}
}

// Attack 2: no network, loopback included — a local listener of the host
// (127.0.0.1, an abstract unix socket) gets nothing.
func TestCheckHasNoNetwork(t *testing.T) {
	b := newBox(t)
	python3(t)
	testkit.WriteFiles(t, b.wt, map[string]string{"connect.py": connectPy})
	tcp, tcpAccepted := listen(t, "tcp", "127.0.0.1:0")
	abstract := fmt.Sprintf("@saga-confine-%d", rand.Int64())
	_, abstractAccepted := listen(t, "unix", abstract)
	res := b.run(t, fmt.Sprintf("python3 connect.py tcp=tcp:%s abstract=unix:%s", tcp.Addr(), abstract))
	if !strings.Contains(res.Output, "tcp unreachable") || !strings.Contains(res.Output, "abstract unreachable") {
		t.Errorf("the check reached the host's network:\n%s", res.Output)
	}
	if tcpAccepted() || abstractAccepted() {
		t.Error("a listener of the host accepted the check's connection")
	}
}

// Suspected in issue 22: ssh-agent and D-Bus sockets reachable like tmux's.
// Real listeners where the user's agents and buses live — /tmp, /var/tmp,
// the runtime dir under /run/user, a runtime dir elsewhere, and sockets the
// environment names anywhere, even beside the repository — and the check
// tries each by its path.
func TestCheckCannotReachHostSockets(t *testing.T) {
	b := newBox(t)
	python3(t)
	testkit.WriteFiles(t, b.wt, map[string]string{"connect.py": connectPy})
	n := rand.Int64()
	sockets := map[string]string{ // name → path
		"tmp-agent":     filepath.Join("/tmp", fmt.Sprintf("ssh-confine%d", n), "agent.1"),
		"var-tmp":       filepath.Join("/var/tmp", fmt.Sprintf("saga-confine-%d", n), "s"),
		"run-user-bus":  filepath.Join("/run/user", strconv.Itoa(os.Getuid()), fmt.Sprintf("saga-confine-%d", n), "bus"),
		"xdg-runtime":   filepath.Join(b.base, "runtime", "bus"),
		"ssh-auth-sock": filepath.Join(b.base, "agent", "agent.sock"),
		"beside-repo":   filepath.Join(b.base, "ipc.sock"),
		"dbus-named":    filepath.Join(b.base, "dbus", "system_bus_socket"),
	}
	b.env = append(b.env, "XDG_RUNTIME_DIR="+filepath.Dir(sockets["xdg-runtime"]), "SSH_AUTH_SOCK="+sockets["ssh-auth-sock"],
		"VSCODE_IPC_HOOK_CLI="+sockets["beside-repo"], "DBUS_SYSTEM_BUS_ADDRESS=unix:path="+sockets["dbus-named"])
	accepted := map[string]func() bool{}
	var args []string
	for name, path := range sockets {
		if err := mkdirs(t, filepath.Dir(path)); err != nil {
			t.Logf("%s: skipped (%v)", name, err)
			continue
		}
		_, accepted[name] = listen(t, "unix", path)
		args = append(args, name+"=unix:"+path)
	}
	res := b.run(t, "python3 connect.py "+strings.Join(args, " ")+"; ls -A /tmp /run /var/tmp")
	for name := range accepted {
		if !strings.Contains(res.Output, name+" unreachable") || accepted[name]() {
			t.Errorf("the check reached %s (%s):\n%s", name, sockets[name], res.Output)
		}
	}
	if len(accepted) < 5 {
		t.Errorf("only %d of the sockets could be made", len(accepted))
	}
}

// Attack 2 and item 1: a check reads the credential stores and the
// environment into a file of the worktree — which the worker commits. The
// stores read empty or denied, the secrets are not in its environment, and
// what toolchains need still is.
func TestCheckCannotReadCredentialsOrSecrets(t *testing.T) {
	b := newBox(t)
	secret := fmt.Sprintf("SECRET-%d", rand.Int64())
	stores := map[string]string{
		".ssh/id_ed25519": secret, ".ssh/config": secret, ".aws/credentials": secret, ".netrc": secret,
		".git-credentials": secret, ".config/gh/hosts.yml": secret, ".claude/.credentials.json": secret,
		".claude.json": secret, ".docker/config.json": secret, ".gnupg/private-keys-v1.d/k.key": secret,
		".kube/config": secret, ".npmrc": secret, ".config/gcloud/credentials.db": secret,
	}
	testkit.WriteFiles(t, b.home, stores)
	testkit.WriteFiles(t, b.base, map[string]string{"gnupg/key": secret, "kubeconfig": secret})
	b.env = append(b.env, "ANTHROPIC_API_KEY="+secret, "GH_TOKEN="+secret, "GITHUB_TOKEN="+secret, "AWS_SECRET_ACCESS_KEY="+secret,
		"OPENAI_API_KEY="+secret, "NPM_TOKEN="+secret, "HTTPS_PROXY=http://user:"+secret+"@proxy:3128", "MY_SERVICE_PASSWORD="+secret,
		"SSH_AUTH_SOCK=/tmp/ssh-"+secret+"/agent.1", "TMUX=/tmp/tmux-0/"+secret+",1,0", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/"+secret,
		"GNUPGHOME="+filepath.Join(b.base, "gnupg"), "KUBECONFIG="+filepath.Join(b.base, "kubeconfig"),
		"GOFLAGS=-count=1", "LC_ALL=C.UTF-8")
	var cats []string
	for rel := range stores {
		cats = append(cats, "~/"+rel)
	}
	res := b.run(t, "{ env; cat "+strings.Join(cats, " ")+" $GNUPGHOME/key "+filepath.Join(b.base, "gnupg/key")+" "+filepath.Join(b.base, "kubeconfig")+
		"; find ~ -type f -exec cat {} +; } > leak.txt 2>&1; echo done")
	if res.Outcome() != "passed" {
		t.Fatalf("the check: %s", res.Outcome())
	}
	leak := testkit.ReadFile(t, filepath.Join(b.wt, "leak.txt"))
	if strings.Contains(leak, secret) {
		t.Errorf("a secret reached the worktree:\n%s", leak)
	}
	for _, want := range []string{"PATH=", "HOME=" + b.home + "\n", "LC_ALL=C.UTF-8", "GOFLAGS=-count=1", "GOPROXY=off", "GOCACHE=" + b.cache,
		"TMPDIR=" + filepath.Join(b.cache, "tmp")} {
		if !strings.Contains(leak, want) {
			t.Errorf("the check's environment lacks %q:\n%s", want, leak)
		}
	}
	// The stores of the user's own home too, whatever $HOME says.
	if real, err := os.UserHomeDir(); err == nil {
		if _, err := os.Stat(filepath.Join(real, ".ssh")); err == nil {
			res := b.run(t, "ls -A "+filepath.Join(real, ".ssh")+" | wc -l")
			if strings.TrimSpace(res.Output) != "0" {
				t.Errorf("the check lists the user's ~/.ssh:\n%s", res.Output)
			}
		}
	}
}

// Issue 32, attack 5: a home inside a place the sandbox hides wholesale
// (/tmp, as on some CI machines and in containers) is bound back for the
// toolchains, and its credential stores, its runtime dir and its agent's
// socket stay hidden inside it — whether $HOME names it or a link to it.
func TestCheckCannotReadCredentialsInAHomeBoundBack(t *testing.T) {
	testkit.Bwrap(t)
	base, err := os.MkdirTemp("/tmp", "saga-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if base, err = filepath.EvalSymlinks(base); err != nil {
		t.Fatal(err)
	}
	secret := fmt.Sprintf("SECRET-%d", rand.Int64())
	home := filepath.Join(base, "home")
	stores := []string{".ssh/id_rsa", ".aws/credentials", ".config/gh/hosts.yml", ".claude/.credentials.json", ".netrc", ".run/token"}
	files := map[string]string{"bin/hello": "#!/bin/sh\necho hello from the home\n"}
	for _, s := range stores {
		files[s] = secret + "\n"
	}
	testkit.WriteFiles(t, home, files)
	if err := os.Chmod(filepath.Join(home, "bin/hello"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".agent"), 0o700); err != nil {
		t.Fatal(err)
	}
	listen(t, "unix", filepath.Join(home, ".agent", "agent.sock"))
	if err := os.Symlink(home, filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	for _, named := range []string{home, filepath.Join(base, "link")} {
		t.Run(filepath.Base(named), func(t *testing.T) {
			b := &box{base: base, wt: filepath.Join(base, "repo-"+filepath.Base(named)), cache: filepath.Join(base, "cache-"+filepath.Base(named)), home: named}
			testkit.WriteFiles(t, b.wt, map[string]string{"README": "a worktree\n"})
			testkit.InitRepo(t, b.wt)
			if err := os.MkdirAll(filepath.Join(b.cache, "tmp"), 0o755); err != nil {
				t.Fatal(err)
			}
			b.env = append(testkit.CleanEnv(), "HOME="+named, "PATH="+filepath.Join(named, "bin")+":"+os.Getenv("PATH"),
				"XDG_RUNTIME_DIR="+filepath.Join(named, ".run"), "SSH_AUTH_SOCK="+filepath.Join(named, ".agent", "agent.sock"))
			// Each store read alone: every cat must fail.
			var cmd strings.Builder
			for _, s := range append(stores, ".agent/agent.sock") {
				for _, h := range []string{"~", home} {
					fmt.Fprintf(&cmd, "cat %s/%s && echo 'READ %s/%s'; ", h, s, h, s)
				}
			}
			cmd.WriteString("ls -A ~/.agent ~/.run " + filepath.Join(home, ".agent") + " " + filepath.Join(home, ".run") + "; hello; find ~/ " + home + "/ -type f -exec cat {} + 2>/dev/null")
			res := b.run(t, cmd.String())
			if strings.Contains(res.Output, secret) || strings.Contains(res.Output, "READ ") || strings.Contains(res.Output, "agent.sock\n") {
				t.Errorf("a store of the home under /tmp was read:\n%s", res.Output)
			}
			if !strings.Contains(res.Output, "hello from the home") {
				t.Errorf("the home's own programs did not run:\n%s", res.Output)
			}
		})
	}
}

// Attack 3: saga-lsp running as root (containers, CI, devcontainers). The
// check has no capabilities in its user namespace: remounting / read-write
// fails, and so does writing outside the worktree.
func TestCheckHasNoCapabilitiesAsRoot(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("not root: the attack is a check of a saga-lsp run as root")
	}
	b := newBox(t)
	outside := filepath.Join(b.base, "written-by-root")
	res := b.run(t, "grep CapEff /proc/self/status; mount -o remount,rw / 2>&1; echo \"remount: $?\"; "+
		"mount -t tmpfs none "+b.base+" 2>&1; echo \"mount: $?\"; echo pwned > "+outside+"; echo \"write: $?\"")
	for _, want := range []string{"CapEff:\t0000000000000000", "remount: 32", "mount: 32", "write: 2"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("a check running as root wrote outside its worktree: %s", outside)
	}
}

// Attack 14: a check allocates 4 GB. The memory limit (default 2GiB) stops
// one process at once (RLIMIT_DATA), and the watchdog stops a check whose
// processes, or whose /tmp, hold more than the limit together.
func TestCheckMemoryLimit(t *testing.T) {
	b := newBox(t)
	python3(t)
	res := b.run(t, `python3 -c "b = b'x' * (4 << 30); print('allocated', len(b))"`)
	if res.Passed || !strings.Contains(res.Output, "MemoryError") {
		t.Errorf("a check allocated 4 GB: %s\n%s", res.Outcome(), res.Output)
	}
	l := store.CheckLimits{Memory: 256 << 20}
	hold := func(secs int) string {
		return fmt.Sprintf(`python3 -c "import time; b = b'x' * (100 << 20); print('holding', flush=True); time.sleep(%d)"`, secs)
	}
	if res := b.runLimited(t, hold(1)+" & "+hold(1)+" & wait", time.Minute, l); !res.Passed {
		t.Errorf("two processes of 100 MB each under a 256MiB limit: %s", res.Outcome())
	}
	res = b.runLimited(t, hold(120)+" & "+hold(120)+" & "+hold(120)+" & wait", 2*time.Minute, l)
	if res.Passed || res.TimedOut || !strings.Contains(res.Outcome(), "killed: its processes and its /tmp held more than 256MiB of memory (checkLimits.memory)") {
		t.Errorf("three processes of 100 MB each under a 256MiB limit: %s", res.Outcome())
	}
	res = b.runLimited(t, "head -c 300M /dev/zero > /tmp/big; sleep 120", 2*time.Minute, l)
	if res.Passed || res.TimedOut || !strings.Contains(res.Outcome(), "more than 256MiB of memory") {
		t.Errorf("300 MB in /tmp under a 256MiB limit: %s", res.Outcome())
	}
}

// Attack 14: the file-size limit (RLIMIT_FSIZE) stops a write at its size,
// and the outcome says which limit.
func TestCheckFileSizeLimit(t *testing.T) {
	b := newBox(t)
	res := b.runLimited(t, "head -c 2097152 /dev/zero > big", time.Minute, store.CheckLimits{FileSize: 1 << 20})
	if res.Passed || !strings.Contains(res.Outcome(), "a file it wrote reached the file-size limit, 1MiB (SIGXFSZ; checkLimits.fileSize)") {
		t.Errorf("a 2 MiB file under a 1MiB limit: %s", res.Outcome())
	}
	if fi, err := os.Stat(filepath.Join(b.wt, "big")); err != nil || fi.Size() != 1<<20 {
		t.Errorf("the file: %v %v", fi, err)
	}
}

// Attack 14: the processes limit — counted in the check's pid namespace,
// which as root RLIMIT_NPROC would not limit.
func TestCheckProcessesLimit(t *testing.T) {
	b := newBox(t)
	l := store.CheckLimits{Processes: 20}
	if res := b.runLimited(t, "for i in $(seq 15); do sleep 1 & done; wait", time.Minute, l); !res.Passed {
		t.Errorf("15 processes under a limit of 20: %s", res.Outcome())
	}
	res := b.runLimited(t, "for i in $(seq 40); do sleep 120 & done; echo forked; wait", 2*time.Minute, l)
	if res.Passed || res.TimedOut || res.Outcome() != "killed: it ran more than 20 processes at once (checkLimits.processes)" {
		t.Errorf("40 processes under a limit of 20: %s", res.Outcome())
	}
}

// Attack 14: CPU time is bounded by the check's timeout (RLIMIT_CPU),
// which a process with several busy threads reaches before the clock does;
// the check cannot lift it.
func TestCheckCPULimit(t *testing.T) {
	b := newBox(t)
	res := b.runLimited(t, `ulimit -t; ulimit -t unlimited 2>/dev/null; echo "raise: $?"`, 3*time.Second, store.CheckLimits{})
	if !strings.HasPrefix(res.Output, "3\nraise: 2") {
		t.Errorf("the CPU limit of a check with a 3 s timeout:\n%s", res.Output)
	}
	// How a CPU-time limit ends a check, whatever the machine's load: the
	// check may lower its own limit (never raise it).
	res = b.runLimited(t, `ulimit -S -t 1; while :; do :; done`, 2*time.Minute, store.CheckLimits{})
	if res.Passed || res.TimedOut || !strings.Contains(res.Outcome(), "exit status 152: ") || !strings.Contains(res.Outcome(), "(SIGXCPU)") {
		t.Errorf("a busy loop under a 1 s CPU limit: %s", res.Outcome())
	}
	testkit.NeedsTool(t, "node", "")
	// Twelve busy threads: on a machine shared with others a process gets
	// a share by its threads.
	burn := `node -e "const {Worker} = require('worker_threads'); for (let i = 0; i < 11; i++) new Worker('for (;;) {}', {eval: true}); setTimeout(() => { for (;;) {} }, 200)"`
	res = b.runLimited(t, burn, 4*time.Second, store.CheckLimits{})
	if res.TimedOut {
		t.Skip("a loaded machine: it gave the check less than a core, so its CPU time could not outrun the clock")
	}
	if res.Passed || !strings.Contains(res.Outcome(), "exit status 152: a process reached its CPU-time limit, the check's timeout of 4s (SIGXCPU)") {
		t.Errorf("twelve busy threads for a check with a 4 s timeout: %s after %s", res.Outcome(), res.Duration)
	}
}

// The defaults do not get in the way of real test suites: go test (its
// modules from the module cache, no network), node --test and Python's
// unittest pass under them.
func TestCheckDefaultsLetTestSuitesPass(t *testing.T) {
	b := newBox(t)
	goMod := testkit.ReadFile(t, filepath.Join(testkit.ModuleRoot(t), "go.mod"))
	var goLine, sysVersion string
	for _, line := range strings.Split(goMod, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "go" {
			goLine = line
		} else if len(f) >= 2 && f[0] == "golang.org/x/sys" {
			sysVersion = f[1]
		}
	}
	var sums []string
	for _, line := range strings.Split(testkit.ReadFile(t, filepath.Join(testkit.ModuleRoot(t), "go.sum")), "\n") {
		if strings.HasPrefix(line, "golang.org/x/sys "+sysVersion+" ") || strings.HasPrefix(line, "golang.org/x/sys "+sysVersion+"/") {
			sums = append(sums, line)
		}
	}
	testkit.WriteFiles(t, b.wt, map[string]string{
		"gop/go.mod":      "module example.com/gop\n\n" + goLine + "\n\nrequire golang.org/x/sys " + sysVersion + "\n",
		"gop/go.sum":      strings.Join(sums, "\n") + "\n",
		"gop/p_test.go":   "package gop\n\nimport (\n\t\"testing\"\n\n\t\"golang.org/x/sys/unix\"\n)\n\nfunc TestPid(t *testing.T) {\n\tif unix.Getpid() <= 0 {\n\t\tt.Fatal(\"no pid\")\n\t}\n\tb := make([]byte, 200<<20)\n\tfor i := range b {\n\t\tb[i] = 1\n\t}\n}\n",
		"nodep/a.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => { const a = Buffer.alloc(200 << 20, 1); assert.equal(a[5], 1); });\n",
		"pyp/test_a.py":   "import unittest\n\nclass T(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(len(b'x' * (200 << 20)), 200 << 20)\n\nif __name__ == '__main__':\n    unittest.main()\n",
	})
	gomodcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	b.env = append(b.env, "GOMODCACHE="+strings.TrimSpace(string(gomodcache)), "GOFLAGS=")
	testkit.GoTestCache(t, filepath.Join(b.cache, "go-build"), true) // the standard library built
	for _, c := range []struct{ tool, command string }{
		{"go", "cd gop && go test -count=1 ./..."},
		{"node", "cd nodep && node --test"},
		{"python3", "cd pyp && python3 -m unittest -v"},
	} {
		if !testkit.HasTool(t, c.tool, "") {
			continue
		}
		if res := b.runLimited(t, c.command, 5*time.Minute, store.CheckLimits{}); !res.Passed {
			t.Errorf("%s under the default limits: %s\n%s", c.command, res.Outcome(), res.Output)
		}
	}
}

// A check whose first process ends takes everything it started with it, at
// its end and at its timeout.
func TestCheckLeavesNothingRunning(t *testing.T) {
	b := newBox(t)
	marker := strconv.Itoa(700000 + rand.IntN(100000))
	res := b.run(t, "setsid sleep "+marker+" & nohup sleep "+marker+" >/dev/null 2>&1 & echo started")
	if !res.Passed {
		t.Fatalf("%s", res.Outcome())
	}
	res = b.runLimited(t, "sleep "+marker+" & sleep "+marker, time.Second, store.CheckLimits{})
	if !res.TimedOut {
		t.Fatalf("%s", res.Outcome())
	}
	for _, pid := range sleeping(marker) {
		if !testkit.WaitExit(pid, 10*time.Second) {
			t.Errorf("a process of the check (pid %d) outlived it", pid)
		}
	}
}

// sleeping lists the host pids of `sleep <arg>`.
func sleeping(arg string) []int {
	var pids []int
	des, _ := os.ReadDir("/proc")
	for _, de := range des {
		pid, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", de.Name(), "cmdline")); err == nil && string(b) == "sleep\x00"+arg+"\x00" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// fakeBwrap puts on PATH a bwrap that fails as the real one does where
// user namespaces are blocked: Ubuntu 24.04's AppArmor default, or a
// kernel or container that forbids them.
func fakeBwrap(t *testing.T, message string) {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\ncat >&2 <<'EOF'\n" + message + "\nEOF\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "bwrap"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// Where checks cannot be confined they are refused, naming the fix, unless
// unconfined checks are allowed; then they run, and say so.
func TestChecksRefusedWhereTheyCannotBeConfined(t *testing.T) {
	wt := t.TempDir()
	for _, c := range []struct{ name, message, fix string }{
		{"AppArmor", "bwrap: setting up uid map: Permission denied", "sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0"},
		{"no user namespaces", "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'.",
			"sudo sysctl kernel.unprivileged_userns_clone=1"},
		{"not installed", "", "install it (apt-get install bubblewrap"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.message != "" {
				fakeBwrap(t, c.message)
			} else {
				// A PATH without bwrap: the check's own tool only.
				dir := t.TempDir()
				touch := testkit.NeedsTool(t, "touch", "")
				if err := os.Symlink(touch, filepath.Join(dir, "touch")); err != nil {
					t.Fatal(err)
				}
				t.Setenv("PATH", dir)
			}
			ctx := context.Background()
			r := verify.NewRunner(ctx, wt, "", verify.Policy{})
			res := r.Run(ctx, "touch ran", time.Minute)
			if r.Mode != verify.Refused || res.Passed || !strings.HasPrefix(res.Outcome(), "not run: ") ||
				!strings.Contains(res.Outcome(), c.fix) || !strings.Contains(res.Outcome(), "--allow-unconfined-checks") ||
				!strings.Contains(verify.Unconfinable(ctx), c.fix) {
				t.Errorf("mode %s: %s", r.Mode, res.Outcome())
			}
			if c.message != "" && !strings.Contains(res.Outcome(), c.message) {
				t.Errorf("the refusal does not quote bubblewrap: %s", res.Outcome())
			}
			if _, err := os.Stat(filepath.Join(wt, "ran")); err == nil {
				t.Fatal("a refused check ran")
			}
			r = verify.NewRunner(ctx, wt, "", verify.Policy{AllowUnconfined: true})
			res = r.RunLimited(ctx, "touch ran; ulimit -d", time.Minute, store.CheckLimits{Memory: 64 << 20})
			if r.Mode != verify.Unconfined || !res.Passed || !strings.Contains(r.Why, "UNCONFINED") || res.Output != "65536" {
				t.Errorf("allowed: mode %s, %s: %s %q", r.Mode, r.Why, res.Outcome(), res.Output)
			}
			os.Remove(filepath.Join(wt, "ran"))
		})
	}
}

// The worker hands the policy to the hook: always, so that a variable in
// the user's shell does not stand for the flag.
func TestPolicyReachesTheHook(t *testing.T) {
	for allow, want := range map[bool]string{true: "1", false: "0"} {
		vars := runs.StoryEnv{Story: "s", AllowUnconfinedChecks: allow}.Vars()
		if !strings.Contains(strings.Join(vars, "\n"), runs.EnvAllowUnconfinedChecks+"="+want) {
			t.Errorf("allow %v: %v", allow, vars)
		}
	}
}
