package lspclient_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
	"github.com/saga-ai/saga-lsp/lsp"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// diagnostics is the part of publishDiagnostics the tests read.
type diagnostics struct {
	URI         string `json:"uri"`
	Diagnostics []struct {
		Code  string          `json:"code"`
		Range lspclient.Range `json:"range"`
	} `json:"diagnostics"`
}

// session initializes c on root and waits for the server's "loaded" log
// message.
func session(t *testing.T, c *lspclient.Client, root string) {
	t.Helper()
	if _, err := c.Call("initialize", map[string]any{"processId": nil, "rootUri": lspclient.FileURI(root), "capabilities": map[string]any{}}, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := c.Notify("initialized", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Next(0, time.Now().Add(20*time.Second), func(m lspclient.Message) bool {
		return m.Method == "window/logMessage" && strings.Contains(string(m.Params), "saga-lsp: loaded")
	}); err != nil {
		t.Fatal(err)
	}
}

// TestInProcess speaks to the server over pipes: a publication found with
// Next and decoded, its range at the text's position, a malformed frame
// answered as an orphan, and the end of the server's output seen.
func TestInProcess(t *testing.T) {
	root := testkit.CopyExample(t, "mistakes")
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- lsp.Serve(context.Background(), sr, sw, lsp.Options{})
		sw.Close()
	}()
	c := lspclient.New(cr, cw, lspclient.Options{})
	session(t, c, root)

	rel := ".saga/stories/billing--invoices/send-emails.json"
	path := filepath.Join(root, rel)
	m, _, err := c.Next(0, time.Now().Add(20*time.Second), func(m lspclient.Message) bool {
		var d diagnostics
		return m.Method == "textDocument/publishDiagnostics" && json.Unmarshal(m.Params, &d) == nil &&
			lspclient.URIPath(d.URI) == path && len(d.Diagnostics) > 0
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.At.IsZero() {
		t.Error("the message has no arrival time")
	}
	var d diagnostics
	json.Unmarshal(m.Params, &d)
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := lspclient.PositionAt(string(text), strings.Index(string(text), `"creat-pdf"`))
	found := false
	for _, x := range d.Diagnostics {
		found = found || (x.Code == "unknown-dependency" && x.Range.Start == want)
	}
	if !found {
		t.Errorf("no unknown-dependency at %+v in %+v", want, d)
	}

	// A frame that is not JSON gets an error response with a null id.
	if err := c.Send([]byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call("shutdown", nil, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if o := c.Orphans(); len(o) != 1 || o[0].Error == nil {
		t.Errorf("orphans %+v, want the parse error's response", o)
	}
	c.Notify("exit", nil)
	c.Close()
	if code := <-exit; code != 0 {
		t.Errorf("exit code %d", code)
	}
	<-c.Done()
	// Waiting after the end says why instead of timing out.
	if _, _, err := c.Next(c.Mark(), time.Now().Add(time.Hour), nil); err == nil || !strings.Contains(err.Error(), "closed its output") || c.Err() == nil {
		t.Errorf("waiting after the end: %v (Err %v)", err, c.Err())
	}
}

// TestProcess runs the binary and stops it.
func TestProcess(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	cmd := exec.Command(testkit.Binary(t), "serve")
	cmd.Dir, cmd.Env = root, testkit.CleanEnv()
	c, err := lspclient.Start(cmd, lspclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	session(t, c, root)
	if c.Pid() != cmd.Process.Pid {
		t.Errorf("pid %d, want %d", c.Pid(), cmd.Process.Pid)
	}
	from := c.Mark()
	c.Discard(from)
	if n := c.Notes(0); len(n) != 0 {
		t.Errorf("%d notes kept after Discard", len(n))
	}
	if err := c.Stop(10 * time.Second); err != nil {
		t.Errorf("stop: %v (stderr %s)", err, c.Stderr())
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("the server ended with %v", cmd.ProcessState)
	}
}
