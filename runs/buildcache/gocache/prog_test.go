//go:build unix

package gocache_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/buildcache/gocache"
)

func TestMain(m *testing.M) {
	testkit.Main(m, func() {
		if shared.dir != "" {
			os.RemoveAll(filepath.Dir(shared.dir))
		}
	})
}

// module writes a small module whose program prints a line built from
// two packages of its own, so that a wrong object linked in shows; few
// standard packages, so that its cold builds stay short.
func module(t *testing.T) string {
	dir := t.TempDir()
	testkit.WriteFiles(t, dir, map[string]string{
		"go.mod":  "module warm\n\ngo 1.24\n",
		"a/a.go":  "package a\n\nimport \"strings\"\n\nfunc A() string { return strings.ToUpper(\"warm\") }\n",
		"b/b.go":  "package b\n\nimport (\n\t\"strconv\"\n\n\t\"warm/a\"\n)\n\nfunc B() string { return a.A() + strconv.Itoa(42) }\n",
		"main.go": "package main\n\nimport \"warm/b\"\n\nfunc main() { println(b.B()) }\n",
	})
	return dir
}

// goCmd runs the go command in dir with GOCACHE=gocache and, when upper is
// set, saga-lsp's GOCACHEPROG over lower.
func goCmd(t *testing.T, dir, gocache, lower string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	env := append(testkit.CleanEnv(), "GOCACHE="+gocache, "GOFLAGS=", "GOTOOLCHAIN=local", "GOPROXY=off")
	prog := ""
	if lower != "" {
		prog = testkit.Binary(t) + " __gocacheprog --upper " + gocache + " --lower " + lower
	}
	cmd.Env = append(env, "GOCACHEPROG="+prog)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// stats is the last line of the upper's counters.
func stats(t *testing.T, upper string) gocache.Stats {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(testkit.ReadFile(t, filepath.Join(upper, gocache.StatsFile))), "\n")
	var s gocache.Stats
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// snapshot is every file of dir with its size and hash (symlinks by
// target), to show that it did not change.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			out[p] = "-> " + target
			return nil
		}
		if !d.Type().IsRegular() {
			out[p] = d.Type().String()
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%x", sha256.Sum256(data))
		return nil
	})
	return out
}

func equalSnapshots(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Errorf("%s: %d files before, %d after", what, len(before), len(after))
	}
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s: %s changed", what, p)
		}
	}
}

// warmed is a GOCACHE that built the module (the user's warm cache): a
// copy of one built once per test process (the standard library's
// objects are most of it, and a test may spoil its own).
func warmed(t *testing.T) string {
	t.Helper()
	shared.Do(func() {
		dir, err := os.MkdirTemp("", "gocache-test-lower-")
		if err != nil {
			shared.err = err
			return
		}
		shared.dir = filepath.Join(dir, "go-build")
		if out, err := goCmd(t, module(t), shared.dir, "", "build", "./..."); err != nil {
			shared.err = fmt.Errorf("warming the lower: %v\n%s", err, out)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	lower := filepath.Join(t.TempDir(), "go-build")
	if err := os.CopyFS(lower, os.DirFS(shared.dir)); err != nil {
		t.Fatal(err)
	}
	return lower
}

// shared is the lower warmed once per test process.
var shared struct {
	sync.Once
	dir string
	err error
}

// A story's first go command is served from the warm lower, writes only
// its upper, and the lower is left as it was.
func TestWarmFromTheLower(t *testing.T) {
	dir := module(t)
	lower := warmed(t)
	before := snapshot(t, lower)
	upper := filepath.Join(t.TempDir(), "go-build")
	if out, err := goCmd(t, dir, upper, lower, "build", "./..."); err != nil {
		t.Fatalf("go build over the warm lower: %v\n%s", err, out)
	}
	if s := stats(t, upper); s.LowerHits*10 < s.Gets*9 || s.Rejected != 0 {
		t.Errorf("counters %+v: want (nearly) every action a hit in the lower, nothing rejected", s)
	}
	// A change the story makes is built and written to the upper only.
	testkit.WriteFiles(t, dir, map[string]string{"a/a.go": "package a\n\nimport \"strings\"\n\nfunc A() string { return strings.ToLower(\"WARM\") }\n"})
	if out, err := goCmd(t, dir, upper, lower, "run", "."); err != nil || out != "warm42\n" {
		t.Errorf("go run after a change: %v\n%s", err, out)
	}
	if s := stats(t, upper); s.Puts == 0 {
		t.Errorf("counters %+v: the changed package was not put into the upper", s)
	}
	// `go clean -cache` cleans the story's own cache.
	if out, err := goCmd(t, dir, upper, lower, "clean", "-cache"); err != nil {
		t.Errorf("go clean -cache: %v\n%s", err, out)
	}
	equalSnapshots(t, "the lower", before, snapshot(t, lower))
}

// A lower whose entries are corrupt or planted — outputs replaced by a
// symlink, flipped, truncated, an index entry that is a fifo, an entry
// claiming a huge output — serves none of them: the build is right and
// nothing hangs or crashes. A hostile upper (the story's own agent wrote
// it) is the story's problem, as a corrupt GOCACHE is Go's: its builds may
// fail, but the program serving it neither crashes nor hangs.
func TestHostileEntriesAreMisses(t *testing.T) {
	dir := module(t)
	lower := warmed(t)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("not an object file"), 0o644)
	hostile := func(cache string) {
		n := 0
		filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if n >= 40 { // enough of each kind; the rest keeps the builds short
				return filepath.SkipAll
			}
			switch {
			case strings.HasSuffix(p, "-d"):
				data, _ := os.ReadFile(p)
				switch n % 3 {
				case 0:
					os.Remove(p)
					os.Symlink(secret, p)
				case 1:
					if len(data) > 0 {
						data[len(data)/2] ^= 0xff
					}
					os.WriteFile(p, data, 0o644)
				case 2:
					os.WriteFile(p, data[:len(data)/2], 0o644)
				}
				n++
			case strings.HasSuffix(p, "-a") && n%7 == 0:
				os.Remove(p)
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
				n++
			case strings.HasSuffix(p, "-a") && n%7 == 1:
				// An entry claiming 2 GiB, sparse on disk.
				line, _ := os.ReadFile(p)
				if len(line) < 3+64+1+64 {
					return nil
				}
				out := filepath.Join(filepath.Dir(filepath.Dir(p)), string(line[3+65:3+65+2]), string(line[3+65:3+65+64])+"-d")
				os.Remove(out)
				f, _ := os.Create(out)
				f.Truncate(2 << 30)
				f.Close()
				os.WriteFile(p, fmt.Appendf(nil, "%s%20d%s", line[:3+65+65], 2<<30, line[3+65+65+20:]), 0o644)
				n++
			}
			return nil
		})
		if n < 20 {
			t.Fatalf("only %d entries made hostile", n)
		}
	}
	hostile(lower)
	upper := filepath.Join(t.TempDir(), "go-build")
	if out, err := goCmd(t, dir, upper, lower, "run", "."); err != nil || out != "WARM42\n" {
		t.Fatalf("go run over a hostile lower: %v\n%s", err, out)
	}
	if s := stats(t, upper); s.Rejected == 0 {
		t.Errorf("counters %+v: no hostile entry was rejected", s)
	}
	hostile(upper)
	if out, _ := goCmd(t, dir, upper, lower, "run", "."); strings.Contains(out, "GOCACHEPROG") {
		t.Fatalf("go run over a hostile upper: the cache program failed:\n%s", out)
	}
}

// The protocol, in process: the capabilities first, a put's body checked
// against its output id, answers by id, an unknown command an error, and
// the end of the input without a close an orderly end.
func TestProtocol(t *testing.T) {
	upper := t.TempDir()
	body := []byte("output")
	sum := sha256.Sum256(body)
	action := sha256.Sum256([]byte("action"))
	req := func(v any) string { b, _ := json.Marshal(v); return string(b) + "\n" }
	b64, _ := json.Marshal(body)
	// Requests are served concurrently, as cmd/go sends them: the miss is
	// asked of an action never put, not of one put in the same stream.
	absent := sha256.Sum256([]byte("absent"))
	in := req(map[string]any{"ID": 1, "Command": "get", "ActionID": absent[:]}) +
		req(map[string]any{"ID": 2, "Command": "put", "ActionID": action[:], "OutputID": sum[:], "BodySize": len(body)}) + string(b64) + "\n" +
		req(map[string]any{"ID": 3, "Command": "put", "ActionID": action[:], "OutputID": action[:], "BodySize": len(body)}) + string(b64) + "\n" +
		req(map[string]any{"ID": 4, "Command": "frobnicate"})
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := gocache.Serve(strings.NewReader(in), pw, gocache.Options{Upper: upper})
		pw.CloseWithError(err)
		done <- err
	}()
	got := map[int]map[string]any{}
	sc := bufio.NewScanner(pr)
	first := true
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if first && fmt.Sprint(r["KnownCommands"]) != "[get put close]" {
			t.Errorf("first message %v", r)
		}
		first = false
		got[int(r["ID"].(float64))] = r
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got[1]["Miss"] != true || got[2]["DiskPath"] != filepath.Join(upper, fmt.Sprintf("%02x", sum[0]), fmt.Sprintf("%x-d", sum)) ||
		got[3]["Err"] == nil || got[4]["Err"] == nil {
		t.Errorf("answers: %v", got)
	}
	// The put is read back by a second go command.
	in = req(map[string]any{"ID": 1, "Command": "get", "ActionID": action[:]}) + req(map[string]any{"ID": 2, "Command": "close"})
	var out strings.Builder
	st, err := gocache.Serve(strings.NewReader(in), &out, gocache.Options{Upper: upper})
	if err != nil || st.UpperHits != 1 || !strings.Contains(out.String(), `"Size":6`) {
		t.Errorf("get after put: %v %+v\n%s", err, st, out.String())
	}
}
