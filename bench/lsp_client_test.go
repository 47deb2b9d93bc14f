//go:build linux

package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
)

// lspProc is a language server run as a process and spoken to as an editor
// would, through the test kit's client, which stamps every message with its
// arrival time as soon as it is read, so latencies exclude the benchmark's
// own decoding. next hands over the server's notifications in arrival order.
type lspProc struct {
	*lspclient.Client
	seen int // notifications handed over (the index of the next one)
}

// startLSP starts the server command. answer may be nil (null answers).
func startLSP(name string, args []string, answer func(string, json.RawMessage) (any, error)) (*lspProc, error) {
	c, err := lspclient.Start(exec.Command(name, args...), lspclient.Options{Answer: answer})
	if err != nil {
		return nil, err
	}
	return &lspProc{Client: c}, nil
}

// next returns the next notification, waiting until deadline; the ones
// handed over are forgotten, so a long benchmark does not keep them.
func (c *lspProc) next(deadline time.Time) (lspclient.Message, error) {
	m, i, err := c.Next(c.seen, deadline, func(m lspclient.Message) bool { return m.ID == nil })
	if err != nil {
		return m, err
	}
	c.seen = i + 1
	c.Discard(c.seen)
	return m, nil
}

// drain skips the notifications already received.
func (c *lspProc) drain() {
	c.seen = c.Mark()
	c.Discard(c.seen)
}

// peakRSSMB is the process's peak resident set so far (VmHWM), in MiB, or
// 0 where /proc cannot tell.
func (c *lspProc) peakRSSMB() float64 {
	return float64(vmHWM(fmt.Sprintf("/proc/%d/status", c.Pid()))) / 1024
}

// stop asks the server to shut down and exit, and waits for the process;
// after the grace period it is killed.
func (c *lspProc) stop() { c.Stop(5 * time.Second) }

// publication is the part of textDocument/publishDiagnostics the
// benchmarks check.
type publication struct {
	URI         string `json:"uri"`
	Version     *int   `json:"version"`
	Diagnostics []struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	} `json:"diagnostics"`
}

func (p publication) has(code string) bool {
	want, _ := json.Marshal(code)
	for _, d := range p.Diagnostics {
		if bytes.Equal(d.Code, want) {
			return true
		}
	}
	return false
}

// fileExists reports whether path names an existing file.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
