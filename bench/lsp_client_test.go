package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
)

// lspProc is a language server run as a process and spoken to as an editor
// would: JSON-RPC frames with Content-Length headers over its stdin and
// stdout. Every frame is stamped with its arrival time as soon as it is read,
// so latencies exclude the benchmark's own decoding.
type lspProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	wmu    sync.Mutex
	stderr *tailBuffer

	mu      sync.Mutex
	nextID  int
	waiters map[string]chan rpcFrame

	notes chan rpcFrame // server→client notifications, in arrival order
	done  chan struct{} // closed when stdout ends
	// answer replies to server→client requests; nil (or a nil result)
	// answers null.
	answer func(method string, params json.RawMessage) (any, error)
}

// rpcFrame is one decoded message and when it arrived.
type rpcFrame struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
	at time.Time
}

// startLSP starts the server command. answer may be nil.
func startLSP(name string, args []string, answer func(string, json.RawMessage) (any, error)) (*lspProc, error) {
	cmd := exec.Command(name, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &lspProc{cmd: cmd, in: in, stderr: &tailBuffer{max: 64 << 10}, waiters: map[string]chan rpcFrame{},
		notes: make(chan rpcFrame, 1<<14), done: make(chan struct{}), answer: answer}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go c.read(bufio.NewReaderSize(out, 1<<16))
	return c, nil
}

func (c *lspProc) read(r *bufio.Reader) {
	defer close(c.done)
	for {
		body, err := readLSPFrame(r)
		at := time.Now()
		if err != nil {
			return
		}
		var m rpcFrame
		if json.Unmarshal(body, &m) != nil {
			continue
		}
		m.at = at
		switch {
		case m.Method != "" && m.ID != nil: // a request from the server
			go c.reply(m)
		case m.Method != "":
			c.notes <- m
		default:
			c.mu.Lock()
			ch := c.waiters[string(m.ID)]
			delete(c.waiters, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

func (c *lspProc) reply(m rpcFrame) {
	var res any
	var err error
	if c.answer != nil {
		res, err = c.answer(m.Method, m.Params)
	}
	var msg map[string]any
	if err != nil {
		msg = map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32603, "message": err.Error()}}
	} else {
		msg = map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res}
	}
	body, _ := json.Marshal(msg)
	c.write(body)
}

func readLSPFrame(r *bufio.Reader) ([]byte, error) {
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
			n, _ = strconv.Atoi(v)
		}
	}
	if n < 0 {
		return nil, errors.New("frame without Content-Length")
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}

// write sends one frame; the header and body go out in one write.
func (c *lspProc) write(body []byte) error {
	frame := make([]byte, 0, len(body)+32)
	frame = fmt.Appendf(frame, "Content-Length: %d\r\n\r\n", len(body))
	frame = append(frame, body...)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.in.Write(frame)
	return err
}

// notify sends a notification; params is marshalled unless it is raw JSON.
func (c *lspProc) notify(method string, params any) error {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		return err
	}
	return c.write(body)
}

// call sends a request and waits up to timeout for its response.
func (c *lspProc) call(method string, params any, timeout time.Duration) (rpcFrame, error) {
	c.mu.Lock()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	ch := make(chan rpcFrame, 1)
	c.waiters[id] = ch
	c.mu.Unlock()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	if err != nil {
		return rpcFrame{}, err
	}
	if err := c.write(body); err != nil {
		return rpcFrame{}, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return m, fmt.Errorf("%s: error %d: %s", method, m.Error.Code, m.Error.Message)
		}
		return m, nil
	case <-c.done:
		return rpcFrame{}, fmt.Errorf("%s: the server closed its output; stderr:\n%s", method, c.stderr)
	case <-time.After(timeout):
		return rpcFrame{}, fmt.Errorf("%s: no response in %s", method, timeout)
	}
}

// next returns the next notification, waiting until deadline.
func (c *lspProc) next(deadline time.Time) (rpcFrame, error) {
	select {
	case m := <-c.notes:
		return m, nil
	default:
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case m := <-c.notes:
		return m, nil
	case <-c.done:
		select {
		case m := <-c.notes:
			return m, nil
		default:
		}
		return rpcFrame{}, fmt.Errorf("the server closed its output; stderr:\n%s", c.stderr)
	case <-t.C:
		return rpcFrame{}, errors.New("timed out waiting for a notification")
	}
}

// drain discards the notifications already received.
func (c *lspProc) drain() {
	for {
		select {
		case <-c.notes:
		default:
			return
		}
	}
}

// peakRSSMB is the process's peak resident set so far (VmHWM), in MiB, or
// 0 where /proc cannot tell.
func (c *lspProc) peakRSSMB() float64 {
	return float64(vmHWM(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))) / 1024
}

// stop asks the server to shut down and exit, and waits for the process;
// after the grace period it is killed.
func (c *lspProc) stop() {
	if _, err := c.call("shutdown", nil, 5*time.Second); err == nil {
		c.notify("exit", nil)
	}
	c.in.Close()
	exited := make(chan struct{})
	go func() {
		c.cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-exited
	}
}

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

// fileURI is the file URI of an absolute path.
func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// uriPath is the file path a file URI names ("" for other URIs), so URIs
// compare however each server escapes them.
func uriPath(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "file" {
		return ""
	}
	return filepath.Clean(filepath.FromSlash(p.Path))
}

// lspPos is an LSP position.
type lspPos struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// posAt converts a byte offset of text to an LSP position with UTF-16
// columns, the encoding both servers use.
func posAt(text string, off int) lspPos {
	line := strings.Count(text[:off], "\n")
	start := strings.LastIndexByte(text[:off], '\n') + 1
	col := 0
	for _, r := range text[start:off] {
		col += len(utf16.Encode([]rune{r}))
	}
	return lspPos{Line: line, Character: col}
}

// tailBuffer keeps the last max bytes written to it (a server's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// fileExists reports whether path names an existing file.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
