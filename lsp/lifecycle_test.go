package lsp

import (
	"encoding/json"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func TestLifecycle(t *testing.T) {
	c := start(t)
	// Before initialize: -32002, and notifications are dropped.
	if m := c.call("textDocument/hover", `{}`); m.Error == nil || m.Error.Code != -32002 {
		t.Fatalf("request before initialize: %+v", m)
	}
	c.initialize(testkit.CopyExample(t, "workspace"), "")
	if m := c.call("initialize", `{"capabilities":{}}`); m.Error == nil || m.Error.Code != -32600 {
		t.Fatalf("second initialize: %+v", m)
	}
	if m := c.call("no/such/method", `{}`); m.Error == nil || m.Error.Code != -32601 {
		t.Fatalf("unknown method: %+v", m)
	}
	if m := c.call("shutdown", `null`); m.Error != nil || string(m.Result) != "null" {
		t.Fatalf("shutdown: %+v", m)
	}
	if m := c.call("textDocument/hover", `{}`); m.Error == nil || m.Error.Code != -32600 {
		t.Fatalf("request after shutdown: %+v", m)
	}
	c.notify("exit", `null`)
	select {
	case code := <-c.exit:
		if code != 0 {
			t.Fatalf("exit after shutdown = %d, want 0", code)
		}
		c.exit <- code // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("no exit")
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	c := start(t)
	c.initialize(testkit.CopyExample(t, "workspace"), "")
	c.notify("exit", `null`)
	select {
	case code := <-c.exit:
		if code != 1 {
			t.Fatalf("exit without shutdown = %d, want 1", code)
		}
		c.exit <- code
	case <-time.After(10 * time.Second):
		t.Fatal("no exit")
	}
}

func TestMalformedMessages(t *testing.T) {
	c := start(t)
	c.sendRaw(`{"jsonrpc":"2.0","id":`) // truncated JSON
	c.sendRaw(`[1,2`)
	c.sendRaw(`{"jsonrpc":"2.0","id":77,"params":{}}`) // neither request nor response
	// The server answered each and is still alive.
	c.initialize(testkit.CopyExample(t, "workspace"), "")
	var codes []int
	for _, m := range c.lc.Orphans() {
		if m.Error != nil {
			codes = append(codes, m.Error.Code)
		}
	}
	if len(codes) != 3 || codes[0] != -32700 || codes[1] != -32700 || codes[2] != -32600 {
		t.Fatalf("error responses to malformed frames: %v, want [-32700 -32700 -32600]", codes)
	}
	// Bad params: -32602, server keeps going.
	if m := c.call("textDocument/hover", `{"textDocument":42}`); m.Error == nil || m.Error.Code != -32602 {
		t.Fatalf("bad params: %+v", m)
	}
	if m := c.call("workspace/symbol", `{"query":""}`); m.Error != nil {
		t.Fatalf("server unusable after bad input: %+v", m)
	}
}

func TestEOFExits(t *testing.T) {
	c := start(t)
	c.initialize(testkit.CopyExample(t, "workspace"), "")
	c.in.Close()
	select {
	case code := <-c.exit:
		c.exit <- code
	case <-time.After(10 * time.Second):
		t.Fatal("server did not exit on EOF")
	}
}

// TestLoadedGivesTheJSONBytes: Options.Loaded hears, before the load is
// reported done, the bytes of the JSON files the workspace holds (the serve
// command sizes its collector from them).
func TestLoadedGivesTheJSONBytes(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	var want int64
	err := filepath.WalkDir(filepath.Join(root, ".saga"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".json" {
			return err
		}
		fi, err := d.Info()
		want += fi.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan int64, 1)
	c := startWith(t, Options{Loaded: func(n int64) { got <- n }})
	c.initialize(root, "") // returns on the "loaded" message; Loaded comes after it
	if n := <-got; n != want || n == 0 {
		t.Errorf("Loaded(%d), want the %d bytes of the workspace's JSON files", n, want)
	}
}

// The initialize result names the session dir (capabilities.experimental.
// saga.sessionDir): clients read it there and never compute it.
func TestInitializeNamesSessionDir(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"", runs.DefaultSessionDir()},
		{"/var/tmp/sessions-of-mine", "/var/tmp/sessions-of-mine"},
	} {
		c := startWith(t, Options{Env: func(k string) string {
			if k == runs.EnvSessionDir {
				return tc.env
			}
			return ""
		}})
		res := c.initialize(testkit.CopyExample(t, "workspace"), "")
		var got struct {
			Capabilities struct {
				Experimental struct {
					Saga struct{ SessionDir string }
				}
			}
		}
		if err := json.Unmarshal(res, &got); err != nil || got.Capabilities.Experimental.Saga.SessionDir != tc.want {
			t.Errorf("SAGA_SESSION_DIR=%q: sessionDir %q (%v), want %q\n%s", tc.env, got.Capabilities.Experimental.Saga.SessionDir, err, tc.want, res)
		}
	}
}
