// Package lspclient is the language-server client of saga-lsp's tests and
// benchmarks: it speaks JSON-RPC frames with Content-Length headers to a
// server as an editor does (over a process's stdio or in-process pipes),
// stamps every message with its arrival time as soon as it is read, keeps
// every server notification and request in order to be waited for, and
// answers the server's requests from another goroutine, as editors do.
// Params, frames and bytes can also go out raw, for the hostile-input tests.
//
// It returns errors instead of failing a test, so benchmarks, goroutines and
// helpers that wrap it with a *testing.T can all use it. Of saga-lsp it
// imports only store's LSP position types.
package lspclient

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// Message is one message from the server: a notification or request
// (Method set), or a response (ID set, Method empty).
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *ResponseError  `json:"error,omitempty"`
	// At is when the message arrived.
	At time.Time `json:"-"`
}

// ResponseError is a response's error member.
type ResponseError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *ResponseError) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

// Options are a client's answers to the server.
type Options struct {
	// Answer replies to a server→client request (registerCapability,
	// workDoneProgress/create, …); nil, or a nil result, answers null, and
	// an error answers a JSON-RPC error.
	Answer func(method string, params json.RawMessage) (any, error)
}

// Client is one connection to a server.
type Client struct {
	in   io.WriteCloser
	wmu  sync.Mutex
	opts Options
	cmd  *exec.Cmd   // when Start ran the server
	tail *tailBuffer // the server's stderr, when Start ran it

	mu      sync.Mutex
	nextID  int
	waiters map[string]chan Message
	base    int       // index of notes[0] (Discard drops the ones before)
	notes   []Message // server→client notifications and requests, in order
	orphans []Message // responses to ids never sent (answers to malformed frames)
	changed chan struct{}
	done    chan struct{} // closed when the server's output ends
	err     error         // why it ended
}

// New speaks to a server that reads from in and writes to out.
func New(out io.Reader, in io.WriteCloser, opts Options) *Client {
	c := &Client{in: in, opts: opts, waiters: map[string]chan Message{}, changed: make(chan struct{}), done: make(chan struct{})}
	go c.read(bufio.NewReaderSize(out, 1<<16))
	return c
}

// Start starts the server command (its Stdin and Stdout must be unset) and
// speaks to it; its stderr, unless set, is kept for error messages.
func Start(cmd *exec.Cmd, opts Options) (*Client, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var tail *tailBuffer
	if cmd.Stderr == nil {
		tail = &tailBuffer{max: 64 << 10}
		cmd.Stderr = tail
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := New(out, in, opts)
	c.cmd, c.tail = cmd, tail
	return c, nil
}

func (c *Client) read(r *bufio.Reader) {
	var err error
	for {
		var body json.RawMessage
		if err = (jsonrpc2.VSCodeObjectCodec{}).ReadObject(r, &body); err != nil {
			break
		}
		var m Message
		if err = json.Unmarshal(body, &m); err != nil {
			err = fmt.Errorf("the server sent a message that is not JSON-RPC: %w: %q", err, body)
			break
		}
		m.At = time.Now()
		c.mu.Lock()
		switch {
		case m.Method != "":
			c.notes = append(c.notes, m)
			c.signalLocked()
			if m.ID != nil {
				// Answered from another goroutine: a pipe has no buffer, and
				// the server may be writing to us at this very moment.
				go c.answer(m)
			}
		default:
			select {
			case c.waiters[string(m.ID)] <- m: // kept until Response takes it
			default:
				// An id never sent (nil channel), or answered twice.
				c.orphans = append(c.orphans, m)
				c.signalLocked()
			}
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	if errors.Is(err, io.EOF) {
		err = errors.New("the server closed its output")
	}
	c.err = err
	c.mu.Unlock()
	close(c.done)
}

// signalLocked wakes whoever waits for a new message.
func (c *Client) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *Client) answer(m Message) {
	var res any
	var err error
	if c.opts.Answer != nil {
		res, err = c.opts.Answer(m.Method, m.Params)
	}
	reply := map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res}
	if err != nil {
		reply = map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32603, "message": err.Error()}}
	}
	body, _ := json.Marshal(reply)
	_ = c.Send(body)
}

// Send writes one frame with body, byte for byte (it need not be valid
// JSON); header and body go out in one write.
func (c *Client) Send(body []byte) error {
	frame := fmt.Appendf(make([]byte, 0, len(body)+32), "Content-Length: %d\r\n\r\n", len(body))
	_, err := c.Write(append(frame, body...))
	return err
}

// Write writes bytes to the server's input as they are, framed or not (for
// tests of the framing), between whole frames of the client's own.
func (c *Client) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.in.Write(p)
}

// Notify sends a notification; params is marshalled (a json.RawMessage goes
// as it is).
func (c *Client) Notify(method string, params any) error {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		return err
	}
	return c.Send(body)
}

// Request sends a request without waiting and returns its id (see
// Response).
func (c *Client) Request(method string, params any) (string, error) {
	return c.request(method, func(id string) ([]byte, error) {
		return json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	})
}

// RequestRaw is Request with params sent byte for byte: they need not be
// valid JSON.
func (c *Client) RequestRaw(method string, params []byte) (string, error) {
	return c.request(method, func(id string) ([]byte, error) {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":%s,"params":%s}`, id, quote(method), params), nil
	})
}

func (c *Client) request(method string, body func(id string) ([]byte, error)) (string, error) {
	c.mu.Lock()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	c.waiters[id] = make(chan Message, 1)
	c.mu.Unlock()
	b, err := body(id)
	if err == nil {
		err = c.Send(b)
	}
	if err != nil {
		c.mu.Lock()
		delete(c.waiters, id)
		c.mu.Unlock()
		return "", fmt.Errorf("%s: %w", method, err)
	}
	return id, nil
}

// NotifyRaw is Notify with params sent byte for byte.
func (c *Client) NotifyRaw(method string, params []byte) error {
	return c.Send(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":%s,"params":%s}`, quote(method), params))
}

func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// Response waits up to timeout for the response to the request id; an
// error response is returned as a Message, not an error.
func (c *Client) Response(id string, timeout time.Duration) (Message, error) {
	c.mu.Lock()
	ch := c.waiters[id]
	c.mu.Unlock()
	if ch == nil {
		return Message{}, fmt.Errorf("no request %s is waiting for its response", id)
	}
	defer func() {
		c.mu.Lock()
		delete(c.waiters, id)
		c.mu.Unlock()
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m := <-ch:
		return m, nil
	case <-c.done:
		select {
		case m := <-ch:
			return m, nil
		default:
		}
		return Message{}, fmt.Errorf("request %s: %w", id, c.endErr())
	case <-t.C:
		return Message{}, fmt.Errorf("no response to request %s in %s", id, timeout)
	}
}

// Call sends a request and waits up to timeout for its response; an error
// response is an error (a *ResponseError, wrapped).
func (c *Client) Call(method string, params any, timeout time.Duration) (Message, error) {
	id, err := c.Request(method, params)
	if err != nil {
		return Message{}, err
	}
	m, err := c.Response(id, timeout)
	if err != nil {
		return m, fmt.Errorf("%s: %w", method, err)
	}
	if m.Error != nil {
		return m, fmt.Errorf("%s: %w", method, m.Error)
	}
	return m, nil
}

// Mark is the index the next server notification or request will have.
func (c *Client) Mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base + len(c.notes)
}

// Next waits until deadline for the first server notification or request
// at index from or later that match accepts (nil accepts any), and returns
// it with its index.
func (c *Client) Next(from int, deadline time.Time, match func(Message) bool) (Message, int, error) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for {
		c.mu.Lock()
		for i := max(from, c.base); i < c.base+len(c.notes); i++ {
			if m := c.notes[i-c.base]; match == nil || match(m) {
				c.mu.Unlock()
				return m, i, nil
			}
		}
		from = c.base + len(c.notes)
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-c.done:
			c.mu.Lock()
			more := from < c.base+len(c.notes)
			c.mu.Unlock()
			if !more {
				return Message{}, from, c.endErr()
			}
		case <-t.C:
			return Message{}, from, errors.New("timed out waiting for a message from the server")
		}
	}
}

// Notes are the server notifications and requests from index from on.
func (c *Client) Notes(from int) []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.notes[min(max(from-c.base, 0), len(c.notes)):]...)
}

// Discard forgets the notifications and requests before index upTo, so a
// long benchmark does not keep them all.
func (c *Client) Discard(upTo int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(max(upTo-c.base, 0), len(c.notes))
	c.notes = append([]Message(nil), c.notes[n:]...)
	c.base += n
}

// Orphans are the responses to ids the client never sent.
func (c *Client) Orphans() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.orphans...)
}

// Done is closed when the server's output has ended; Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is why the server's output ended (nil while it has not).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Client) endErr() error {
	err := c.Err()
	if c.tail != nil {
		return fmt.Errorf("%w; stderr:\n%s", err, c.tail)
	}
	return err
}

// Close closes the server's input.
func (c *Client) Close() error { return c.in.Close() }

// Pid is the server process's id (0 when the client did not start it).
func (c *Client) Pid() int {
	if c.cmd == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// Stderr is the end of the server's stderr, when Start keeps it.
func (c *Client) Stderr() string {
	if c.tail == nil {
		return ""
	}
	return c.tail.String()
}

// Stop asks the server to shut down and exit, closes its input and, when
// Start ran it, waits for the process: killed after grace.
func (c *Client) Stop(grace time.Duration) error {
	var err error
	if _, err = c.Call("shutdown", nil, grace); err == nil {
		err = c.Notify("exit", nil)
	}
	c.Close()
	if c.cmd == nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case werr := <-exited:
		return errors.Join(err, werr)
	case <-time.After(grace):
		c.cmd.Process.Kill()
		return errors.Join(err, <-exited, errors.New("the server did not exit after shutdown and exit; killed"))
	}
}

// tailBuffer keeps the last max bytes written to it.
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
