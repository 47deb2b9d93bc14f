// Package chaos owns the conventions of saga-lsp's fuzz and chaos suite:
// randomized tests that are seeded (a failure prints the seed that replays
// it) and bounded in time, and the hostile inputs they draw from — JSON
// values, mutations of well-formed params, framing garbage. The package's
// tests drive the built binary (the language server, the hook, concurrent
// and killed writers); the packages with Go fuzz targets (lsp, store/jsonc,
// store/schema) use the same budget and generators in-process.
//
// SAGA_CHAOS_TIME (a Go duration, default 4s) is the total time of one run's
// randomized tests, shared out by Start; `make fuzz` raises it.
// SAGA_CHAOS_SEED fixes the seed of every randomized test, to replay a
// failure.
package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The environment variables that set the budget and replay a seed.
const (
	TimeEnv = "SAGA_CHAOS_TIME"
	SeedEnv = "SAGA_CHAOS_SEED"
)

// defaultTotal is the budget of a plain `go test` run: a few seconds.
const defaultTotal = 4 * time.Second

// Start gives a randomized test its random source and its deadline: share
// of the total budget from now. The seed is logged, and said again with any
// failure so the run can be replayed.
func Start(t testing.TB, share float64) (*rand.Rand, time.Time) {
	t.Helper()
	total := defaultTotal
	if v := os.Getenv(TimeEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", TimeEnv, v, err)
		}
		total = d
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(SeedEnv); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", SeedEnv, v, err)
		}
		seed = s
	}
	t.Logf("seed %d (replay: %s=%d)", seed, SeedEnv, seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("FAILED with seed %d: replay with %s=%d go test -run '^%s$'", seed, SeedEnv, seed, t.Name())
		}
	})
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), time.Now().Add(time.Duration(float64(total) * share))
}

// hostileScalars are JSON texts a careless or hostile client sends where
// something else was expected.
var hostileScalars = []string{
	`null`, `true`, `false`, `0`, `-1`, `-0`, `1.5`, `1e400`, `-1e400`, `2147483647`, `2147483648`, `4294967296`,
	`-2147483649`, `9007199254740993`, `""`, `"x"`, `"\u0000"`, `"\ud800"`, `"` + "\xff\xfe" + `"`, `"😀"`,
	`"file:///etc/passwd"`, `"file:///../../../x.json"`, `"file://host/share/x.json"`, `"not a uri"`, `"%zz"`,
	`"file:///tmp/a%00b.json"`, `"line\nbreak"`, `[]`, `{}`, `[null]`, `{"":null}`,
}

// HostileValue returns one hostile JSON text: a scalar of the wrong kind or
// range, a huge string, a deep nesting, a long array.
func HostileValue(r *rand.Rand) string {
	switch r.IntN(10) {
	case 0:
		return strconv.Quote(strings.Repeat("a", 1+r.IntN(200_000)))
	case 1:
		n := 1 + r.IntN(20_000)
		return strings.Repeat("[", n) + strings.Repeat("]", n)
	case 2:
		n := 1 + r.IntN(5_000)
		return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
	case 3:
		elems := make([]string, 1+r.IntN(5000))
		for i := range elems {
			elems[i] = hostileScalars[r.IntN(len(hostileScalars))]
		}
		return "[" + strings.Join(elems, ",") + "]"
	}
	return hostileScalars[r.IntN(len(hostileScalars))]
}

// Mutate returns the JSON text of v (a decoded JSON value) with one to
// three random places changed: a value replaced by a hostile one, a member
// removed, a member added, or the whole value replaced.
func Mutate(r *rand.Rand, v any) string {
	for range 1 + r.IntN(3) {
		v = mutate(r, v, 0)
	}
	var b strings.Builder
	encode(&b, v)
	return b.String()
}

// encode writes v as JSON, hostile values verbatim (encoding/json would
// refuse nesting deeper than 10,000).
func encode(b *strings.Builder, v any) {
	switch x := v.(type) {
	case json.RawMessage:
		b.Write(x)
	case map[string]any:
		b.WriteByte('{')
		first := true
		for k, e := range x {
			if !first {
				b.WriteByte(',')
			}
			first = false
			encode(b, k)
			b.WriteByte(':')
			encode(b, e)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			encode(b, e)
		}
		b.WriteByte(']')
	default:
		enc, err := json.Marshal(x)
		if err != nil {
			panic(fmt.Sprintf("chaos: encode %T: %v", x, err)) // decoded JSON scalars always encode
		}
		b.Write(enc)
	}
}

func mutate(r *rand.Rand, v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 && r.IntN(3) > 0 {
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			k := keys[r.IntN(len(keys))]
			c := copyMap(x)
			switch r.IntN(4) {
			case 0:
				delete(c, k)
			default:
				c[k] = mutate(r, x[k], depth+1)
			}
			return c
		}
		if r.IntN(2) == 0 {
			c := copyMap(x)
			c[[]string{"extra", "", "uri", "textDocument", "position", "range"}[r.IntN(6)]] = json.RawMessage(HostileValue(r))
			return c
		}
	case []any:
		if len(x) > 0 && r.IntN(3) > 0 {
			c := append([]any(nil), x...)
			i := r.IntN(len(c))
			c[i] = mutate(r, c[i], depth+1)
			return c
		}
	}
	return json.RawMessage(HostileValue(r))
}

func copyMap(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Garbage returns bytes that break LSP framing: a Content-Length that counts
// characters or is off, missing, duplicated, negative, huge; garbage
// between frames; binary noise; a header cut short.
func Garbage(r *rand.Rand) string {
	body := `{"jsonrpc":"2.0","id":"garbage","method":"textDocument/hover","params":{"x":"é€😀"}}`
	n := len(body)
	switch r.IntN(12) {
	case 0:
		return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len([]rune(body)), body) // characters, not bytes
	case 1:
		return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", n+1+r.IntN(40), body) // too long
	case 2:
		return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", max(0, n-1-r.IntN(40)), body) // too short
	case 3:
		return "Content-Type: application/vscode-jsonrpc\r\n\r\n" + body // no length
	case 4:
		return fmt.Sprintf("Content-Length: %d\r\nContent-Length: %d\r\n\r\n%s", n, n+3, body)
	case 5:
		return "Content-Length: -" + strconv.Itoa(r.IntN(1000)) + "\r\n\r\n" + body
	case 6:
		return "Content-Length: 99999999999999999999999\r\n\r\n" + body
	case 7:
		return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", 40<<20, body) // huge but allowed, body short
	case 8:
		b := make([]byte, 1+r.IntN(300))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	case 9:
		return "Content-Len"
	case 10:
		return strings.Repeat("x", r.IntN(100_000)) + "\r\n"
	}
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", n, body[:n/2]+strings.Repeat(" ", n-n/2)) // not JSON
}

// ReadFrame reads one Content-Length frame's body strictly (one exact
// header, a body of that length): FuzzFrames checks the server's output
// with it, independently of the tests' client (lspclient).
func ReadFrame(r *bufio.Reader) ([]byte, error) {
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			if n, err = strconv.Atoi(v); err != nil {
				return nil, fmt.Errorf("bad Content-Length %q", v)
			}
		}
	}
	if n < 0 {
		return nil, fmt.Errorf("a frame without Content-Length")
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}
