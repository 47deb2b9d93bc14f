//go:build unix

package gocache_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// Red team (issue 32, closing note): `saga-lsp __gocacheprog` fed hostile
// input on its protocol, by a go command a story's code drives — or by
// that code itself, which can start the program with any input. It runs
// as the user inside the story's sandbox; what it must never do is crash,
// hang, write outside its upper, or write the lower.

// serveRaw runs the real binary on input and returns its exit status,
// stdout and stderr.
func serveRaw(t *testing.T, upper, lower, input string) testkit.Result {
	t.Helper()
	args := []string{"__gocacheprog", "--upper", upper}
	if lower != "" {
		args = append(args, "--lower", lower)
	}
	return testkit.Run(t, t.TempDir(), testkit.CleanEnv(), input, testkit.Binary(t), args...)
}

func line(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

// answers indexes the program's replies by ID (the capabilities, ID 0,
// included).
func answers(t *testing.T, stdout string) map[int]map[string]any {
	t.Helper()
	got := map[int]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("reply %q: %v", l, err)
		}
		got[int(r["ID"].(float64))] = r
	}
	return got
}

// Malformed requests end the program with a clear error (exit 1, naming
// GOCACHEPROG and what it could not read), never a panic or a hang; a
// request whose body does not match its size or output id, or whose ids are
// not hashes, is answered with an error or a miss, and nothing is written.
func TestHostileProtocol(t *testing.T) {
	for name, input := range map[string]string{
		"not JSON":         "{\"ID\": 1, \"Command\": \"get\"\nthis is not json\n",
		"a huge number":    `{"ID": 1e400, "Command": "get"}` + "\n",
		"deep nesting":     strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n",
		"invalid UTF-8":    "{\"ID\": 1, \"Command\": \"\xff\xfe\"}\n{\xff}\n",
		"a body that ends": line(map[string]any{"ID": 1, "Command": "put", "ActionID": make([]byte, 32), "OutputID": make([]byte, 32), "BodySize": 1 << 40}),
		"a body not JSON":  line(map[string]any{"ID": 1, "Command": "put", "ActionID": make([]byte, 32), "OutputID": make([]byte, 32), "BodySize": 3}) + "abc\n",
	} {
		t.Run(name, func(t *testing.T) {
			upper := filepath.Join(t.TempDir(), "go-build")
			r := serveRaw(t, upper, "", input)
			if name == "invalid UTF-8" {
				// JSON decoding replaces invalid bytes; the first line is a
				// request of an unknown command, the second is not JSON.
				if !strings.Contains(r.Stdout, "unknown command") {
					t.Errorf("no error for the unknown command:\n%s", r.Stdout)
				}
			}
			if r.Code != 1 || !strings.Contains(r.Stderr, "saga-lsp: GOCACHEPROG: read ") || strings.Contains(r.Stderr, "panic") {
				t.Fatalf("exit %d, want 1 naming what could not be read\n%s", r.Code, r.Stderr)
			}
			assertOnlyHexEntries(t, upper)
		})
	}

	upper := filepath.Join(t.TempDir(), "go-build")
	body := []byte("object")
	sum := sha256.Sum256(body)
	b64 := line(body)
	dots := []byte("../../../../../../../../../../x/") // 32 bytes: a "hash" of path traversal
	// The get is of other bytes than put 7's: requests may be answered in
	// any order, so a get of dots could meet put 7's entry (a CI run under
	// load did).
	dotsGet := []byte("../../../../../../../../../../y/")
	slash := []byte("/tmp/evil/" + strings.Repeat("a", 22))                                            // 32 bytes
	input := line(map[string]any{"ID": 1, "Command": "get", "ActionID": []byte("../../etc/passwd")}) + // not a hash
		line(map[string]any{"ID": 2, "Command": "get", "ActionID": dotsGet}) +
		line(map[string]any{"ID": 3, "Command": "put", "ActionID": []byte(".."), "OutputID": sum[:], "BodySize": len(body)}) + b64 +
		line(map[string]any{"ID": 4, "Command": "put", "ActionID": dots, "OutputID": dots, "BodySize": len(body)}) + b64 +
		line(map[string]any{"ID": 5, "Command": "put", "ActionID": slash, "OutputID": sum[:], "BodySize": 1 << 62}) + b64 +
		line(map[string]any{"ID": 6, "Command": "put", "ActionID": slash, "OutputID": sum[:], "BodySize": -5}) +
		line(map[string]any{"ID": 7, "Command": "put", "ActionID": dots, "OutputID": sum[:], "BodySize": len(body)}) + b64 +
		line(map[string]any{"ID": 8, "Command": "close"})
	r := serveRaw(t, upper, "", input)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	got := answers(t, r.Stdout)
	if got[1]["Miss"] != true || got[2]["Miss"] != true {
		t.Errorf("gets of ids that are not hashes of a put: %v %v", got[1], got[2])
	}
	for _, id := range []int{3, 4, 5, 6} {
		if got[id]["Err"] == nil {
			t.Errorf("put %d accepted: %v", id, got[id])
		}
	}
	// A 32-byte id made of dots and slashes is stored under its hex name,
	// inside the upper.
	want := filepath.Join(upper, hex.EncodeToString(sum[:1]), hex.EncodeToString(sum[:])+"-d")
	if got[7]["Err"] != nil || got[7]["DiskPath"] != want {
		t.Errorf("put 7: %v, want its output at %s", got[7], want)
	}
	if _, err := os.Stat(filepath.Join(upper, hex.EncodeToString(dots[:1]), hex.EncodeToString(dots)+"-a")); err != nil {
		t.Errorf("the entry of put 7: %v", err)
	}
	assertOnlyHexEntries(t, upper)
}

// assertOnlyHexEntries fails when the upper holds anything but cmd/go's
// layout (hex shards of hex-named entries) and the program's own files.
func assertOnlyHexEntries(t *testing.T, upper string) {
	t.Helper()
	ok := regexp.MustCompile(`^([0-9a-f]{2}/[0-9a-f]{64}-[ad]|[0-9a-f]{2}|` + regexp.QuoteMeta(statsName) + `)$`)
	filepath.WalkDir(upper, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == upper {
			return nil
		}
		rel, _ := filepath.Rel(upper, p)
		if !ok.MatchString(filepath.ToSlash(rel)) {
			t.Errorf("the upper holds %s", rel)
		}
		return nil
	})
}

const statsName = "saga-lsp-gocacheprog.jsonl"

// An output or an entry "outside the cache": links planted in the story's
// own cache (the agent's Bash writes it) at an output, at an entry, at a
// shard folder and at the counters' file, each leading to a file or folder
// outside. A get never serves through them from the upper; a put replaces
// the link or refuses, and never writes where it leads. The lower (the
// user's cache) is never written, whatever is asked.
func TestLinksPlantedInTheUpper(t *testing.T) {
	base := t.TempDir()
	upper, lower, outside := filepath.Join(base, "upper"), filepath.Join(base, "lower"), filepath.Join(base, "outside")
	for _, d := range []string{upper, lower, outside} {
		os.MkdirAll(d, 0o755)
	}
	victim := filepath.Join(outside, "victim")
	os.WriteFile(victim, []byte("the user's file\n"), 0o644)

	body := []byte("object")
	sum := sha256.Sum256(body)
	action := sha256.Sum256([]byte("action"))
	other := sha256.Sum256([]byte("other"))
	shard := func(id []byte) string { return filepath.Join(upper, hex.EncodeToString(id[:1])) }
	file := func(id []byte, key string) string {
		return filepath.Join(shard(id), hex.EncodeToString(id)+"-"+key)
	}
	// The output and the entry of action are links to the victim; the
	// shard of other's entry is a link to the folder outside; so is the
	// counters' file.
	os.MkdirAll(shard(sum[:]), 0o755)
	os.MkdirAll(shard(action[:]), 0o755)
	os.Symlink(victim, file(sum[:], "d"))
	entry := fmt.Sprintf("v1 %x %x %20d %20d\n", action, sum, len(body), 1)
	os.WriteFile(filepath.Join(outside, "entry"), []byte(entry), 0o644)
	os.Symlink(filepath.Join(outside, "entry"), file(action[:], "a"))
	if shard(other[:]) != shard(action[:]) && shard(other[:]) != shard(sum[:]) {
		os.Symlink(outside, shard(other[:]))
	} else {
		t.Fatal("pick other ids: their shards collide")
	}
	os.Symlink(victim, filepath.Join(upper, statsName))
	lowerBefore := snapshot(t, lower)
	outsideBefore := snapshot(t, outside)

	b64 := line(body)
	r := serveRaw(t, upper, lower, line(map[string]any{"ID": 1, "Command": "get", "ActionID": action[:]})+
		line(map[string]any{"ID": 2, "Command": "close"}))
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	if got := answers(t, r.Stdout); got[1]["Miss"] != true {
		t.Errorf("get through a linked entry: %v", got[1])
	}
	r = serveRaw(t, upper, lower, line(map[string]any{"ID": 1, "Command": "put", "ActionID": action[:], "OutputID": sum[:], "BodySize": len(body)})+b64+
		line(map[string]any{"ID": 2, "Command": "put", "ActionID": other[:], "OutputID": sum[:], "BodySize": len(body)})+b64+
		line(map[string]any{"ID": 3, "Command": "close"}))
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	got := answers(t, r.Stdout)
	if got[1]["Err"] != nil {
		t.Errorf("put over linked files (replaced, not followed): %v", got[1])
	}
	equalSnapshots(t, "the folder outside the upper", outsideBefore, snapshot(t, outside))
	equalSnapshots(t, "the lower", lowerBefore, snapshot(t, lower))
	for _, p := range []string{file(sum[:], "d"), file(action[:], "a")} {
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s is not the regular file the put wrote: %v", p, err)
		}
	}
	if got[2]["Err"] == nil {
		t.Errorf("put through a shard linked outside: %v", got[2])
	}
}
