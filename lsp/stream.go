package lsp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// maxFrame bounds one message body: a client bug must not make the server
// allocate without limit.
const maxFrame = 64 << 20

// frameStream is a jsonrpc2.ObjectStream over Content-Length frames that
// survives bad input: a body that is not JSON, or not a JSON-RPC message, is
// answered with -32700 / -32600 and reading goes on with the next frame.
// (sourcegraph/jsonrpc2 closes the connection on any ReadObject error.)
type frameStream struct {
	r   *bufio.Reader
	w   io.Writer
	c   io.Closer
	wmu sync.Mutex // one writer at a time: replies come from several goroutines
	// trace, when set, receives every frame in and out (-rpc.trace).
	trace func(dir string, body []byte)
}

func newFrameStream(r io.Reader, w io.Writer, c io.Closer) *frameStream {
	return &frameStream{r: bufio.NewReaderSize(r, 64<<10), w: w, c: c}
}

func (s *frameStream) WriteObject(obj any) error {
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return s.writeFrame(body)
}

func (s *frameStream) writeFrame(body []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.trace != nil {
		s.trace("send", body)
	}
	if _, err := fmt.Fprintf(s.w, "Content-Length: %d\r\n\r\n", len(body)); err != nil {
		return err
	}
	_, err := s.w.Write(body)
	return err
}

func (s *frameStream) ReadObject(v any) error {
	for {
		body, err := s.readFrame()
		if err != nil {
			return err
		}
		if body == nil {
			continue // a bad header was answered; next frame
		}
		if s.trace != nil {
			s.trace("recv", body)
		}
		if !json.Valid(body) {
			s.replyError(nil, -32700, "parse error: the message body is not valid JSON")
			continue
		}
		if err := json.Unmarshal(body, v); err != nil {
			s.replyError(rawID(body), -32600, "invalid request: "+err.Error())
			continue
		}
		return nil
	}
}

// readFrame reads one frame. It returns (nil, nil) after answering a frame
// whose header was unusable.
func (s *frameStream) readFrame() ([]byte, error) {
	length := -1
	sawHeader := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && (sawHeader || line != "") {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if !sawHeader {
				continue // stray blank line between frames
			}
			break
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err == nil && n >= 0 {
				length = n
			}
		}
	}
	if length < 0 || length > maxFrame {
		s.replyError(nil, -32700, "parse error: missing or invalid Content-Length header")
		return nil, nil
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.r, body); err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	return body, nil
}

func (s *frameStream) replyError(id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": msg},
	})
	_ = s.writeFrame(body) // the peer is gone if this fails; the read loop will see it
}

// rawID extracts a request id from a body that failed to decode as a message,
// so the error can name it.
func rawID(body []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	if b := bytes.TrimSpace(m.ID); len(b) > 0 && (b[0] == '"' || (b[0] >= '0' && b[0] <= '9') || b[0] == '-') {
		return m.ID
	}
	return nil
}

func (s *frameStream) Close() error {
	if s.c != nil {
		return s.c.Close()
	}
	return nil
}
