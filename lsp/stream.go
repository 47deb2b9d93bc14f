package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// maxFrame bounds one message body: a client bug must not make the server
// allocate without limit.
const maxFrame = 64 << 20

// maxHeaderLine bounds a header line; a longer stretch without a line break
// is garbage, skipped up to the next Content-Length header.
const maxHeaderLine = 8 << 10

// contentLength is the header every frame must carry (matched without
// regard to case, as HTTP headers are).
const contentLength = "content-length"

// frameStream is a jsonrpc2.ObjectStream over Content-Length frames that
// survives bad input and never loses its place in the stream
// (sourcegraph/jsonrpc2 closes the connection on any ReadObject error):
//
//   - a body that is not JSON, or not a JSON-RPC message, is answered with
//     -32700 / -32600 (carrying the request's id when it can be read);
//   - a header without a usable Content-Length (missing, negative, not a
//     number, over maxFrame, two different ones) is answered with -32700,
//     and reading resumes at the next Content-Length header;
//   - bytes that are not a frame (garbage between frames, the tail of a
//     body whose Content-Length was too small — a length counting
//     characters instead of bytes) are skipped up to the next
//     Content-Length header, answered with one -32700 unless they are the
//     tail of a frame already answered;
//   - a body that holds the start of the next frame (its Content-Length was
//     too large) is cut there and answered with -32700, and the next frame
//     is read from there — as soon as it arrives, so a client waiting for
//     an answer is never left waiting for bytes it will not send. A header
//     is recognisable inside a body because raw line breaks cannot occur
//     in a JSON string.
type frameStream struct {
	r   frameReader
	w   io.Writer
	c   io.Closer
	wmu sync.Mutex // one writer at a time: replies come from several goroutines
	// trace, when set, receives every frame in and out (-rpc.trace).
	trace func(dir string, body []byte)
	// skipped counts bytes dropped while looking for the next frame;
	// afterBroken says the last frame was broken and already answered, so
	// its tail is dropped without a second answer.
	skipped     int
	afterBroken bool
}

func newFrameStream(r io.Reader, w io.Writer, c io.Closer) *frameStream {
	return &frameStream{r: frameReader{src: r, buf: make([]byte, 64<<10)}, w: w, c: c}
}

func (s *frameStream) WriteObject(obj any) error {
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return s.writeFrame(body)
}

// writeMessage frames the JSON-RPC message {"jsonrpc":"2.0",<members><payload>}
// around an already encoded payload (a result, a notification's params).
// The library's encoder would validate and compact the payload again for
// each layer of its message types — three passes over the 15 MB of
// diagnostics of a 60,000-entry file, more than building them.
func (s *frameStream) writeMessage(members string, payload json.RawMessage) error {
	body := make([]byte, 0, len(`{"jsonrpc":"2.0",}`)+len(members)+len(payload))
	body = append(body, `{"jsonrpc":"2.0",`...)
	body = append(body, members...)
	body = append(body, payload...)
	return s.writeFrame(append(body, '}'))
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
			continue // a broken frame was answered; next frame
		}
		if s.trace != nil {
			s.trace("recv", body)
		}
		if !json.Valid(body) {
			s.afterBroken = true // its tail, if the length was short, follows
			s.replyError(truncatedID(body), codeParseError, "parse error: the message body is not valid JSON (does its Content-Length count bytes?)")
			continue
		}
		if err := json.Unmarshal(body, v); err != nil {
			s.replyError(rawID(body), codeInvalidRequest, "invalid request: "+err.Error())
			continue
		}
		return nil
	}
}

// readFrame reads one frame's body. It returns (nil, nil) after answering
// a frame it could not read.
func (s *frameStream) readFrame() ([]byte, error) {
	length, problem, err := s.readHeader()
	if s.skipped > 0 {
		if !s.afterBroken {
			s.replyError(nil, codeParseError, fmt.Sprintf("parse error: skipped %d bytes that were not a frame, up to the next Content-Length header", s.skipped))
		}
		s.skipped = 0
	}
	s.afterBroken = false
	if err != nil {
		return nil, err
	}
	if problem != "" {
		s.afterBroken = true // the body that follows is unreadable; skip it quietly
		s.replyError(nil, codeParseError, "parse error: "+problem)
		return nil, nil
	}
	body, cut, err := s.r.body(length)
	if err != nil {
		return nil, err
	}
	if cut {
		s.replyError(truncatedID(body), codeParseError, fmt.Sprintf(
			"parse error: the next frame began %d bytes into a body announced as %d bytes long", len(body), length))
		return nil, nil
	}
	return body, nil
}

// readHeader reads a header block up to its blank line, skipping garbage
// before it. problem says why a header read whole is unusable.
func (s *frameStream) readHeader() (length int, problem string, err error) {
	length = -1
	sawHeader := false
	for {
		line, skipped, err := s.r.line()
		s.skipped += skipped
		if err != nil {
			if errors.Is(err, io.EOF) && (sawHeader || len(line) > 0) {
				return 0, "", io.ErrUnexpectedEOF
			}
			return 0, "", err
		}
		if len(line) == 0 {
			if !sawHeader {
				continue // blank lines between frames
			}
			break
		}
		k := indexHeaderName(line)
		if k < 0 {
			if sawHeader || isHeaderLine(line) {
				sawHeader = true // another header (Content-Type), or a line to ignore inside a header
			} else {
				s.skipped += len(line) + 1
			}
			continue
		}
		s.skipped += k // garbage glued before the header
		sawHeader = true
		value := strings.TrimSpace(string(line[k+len(contentLength)+1:]))
		n, convErr := strconv.Atoi(value)
		switch {
		case convErr != nil || n < 0:
			problem = fmt.Sprintf("invalid Content-Length %q", value)
		case n > maxFrame:
			problem = fmt.Sprintf("Content-Length %d is over the %d MB limit", n, maxFrame>>20)
		case length >= 0 && n != length:
			problem = fmt.Sprintf("two different Content-Length headers (%d and %d)", length, n)
		}
		length = n
	}
	if problem == "" && length < 0 {
		problem = "a header without Content-Length"
	}
	return length, problem, nil
}

// indexHeaderName finds "Content-Length:" in a line, or -1.
func indexHeaderName(line []byte) int {
	for from := 0; ; {
		i := bytes.IndexByte(line[from:], ':')
		if i < 0 {
			return -1
		}
		colon := from + i
		if start := colon - len(contentLength); start >= 0 && strings.EqualFold(string(line[start:colon]), contentLength) {
			return start
		}
		from = colon + 1
	}
}

// isHeaderLine tells whether a line is "Name: value" with a token name.
func isHeaderLine(line []byte) bool {
	name, _, ok := bytes.Cut(line, []byte(":"))
	if !ok || len(name) == 0 {
		return false
	}
	for _, c := range name {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// headerAt reports whether b[i:] starts a complete Content-Length header
// line ("Content-Length:", blanks, digits, blanks, a line break). more is
// true when b ends before that can be decided.
func headerAt(b []byte, i int) (found, more bool) {
	j := i + len(contentLength)
	if j >= len(b) {
		return false, true
	}
	if b[j] != ':' || !strings.EqualFold(string(b[i:j]), contentLength) {
		return false, false
	}
	j++
	for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
		j++
	}
	digits := j
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
		j++
	}
	if j == len(b) {
		return false, true
	}
	return j > digits && (b[j] == '\r' || b[j] == '\n'), false
}

// frameReader buffers the input for frameStream: lines of a header, bodies
// of a given length, and a look back into a body for the next frame.
type frameReader struct {
	src        io.Reader
	buf        []byte // buf[start:end] is read and not consumed
	start, end int
	err        error // the input's error, once it failed
}

func (r *frameReader) unread() []byte { return r.buf[r.start:r.end] }

// more reads more input; false once the input has failed.
func (r *frameReader) more() bool {
	if r.err != nil {
		return false
	}
	if r.start > 0 {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.start = 0
	}
	if r.end == len(r.buf) {
		r.buf = append(r.buf, make([]byte, len(r.buf))...)
	}
	for {
		n, err := r.src.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			r.err = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

// line returns the next line without its line break. A stretch longer
// than maxHeaderLine without one is dropped up to the next Content-Length
// header (skipped counts it). At the end of input it returns what is left
// with the input's error.
func (r *frameReader) line() (line []byte, skipped int, err error) {
	for {
		u := r.unread()
		if i := bytes.IndexByte(u, '\n'); i >= 0 {
			line = u[:i]
			r.start += i + 1
			return bytes.TrimSuffix(line, []byte("\r")), skipped, nil
		}
		if len(u) > maxHeaderLine {
			var drop int
			switch k := indexHeaderName(u); {
			case k < 0:
				drop = len(u) - len(contentLength) // keep what may be the start of the header
			case k == 0:
				drop = len(contentLength) + 1 // the header line itself never ends: not a header
			default:
				drop = k
			}
			r.start += drop
			skipped += drop
			continue
		}
		if !r.more() {
			u = r.unread()
			r.start = r.end
			return u, skipped, r.err
		}
	}
}

// body returns the next n bytes. When a Content-Length header line shows up
// inside them, the body ends there (cut is true) and the header stays to be
// read as the next frame's.
func (r *frameReader) body(n int) (body []byte, cut bool, err error) {
	scanned := 0 // offsets before this hold no header start
	for {
		u := r.unread()
		k, next, pending := findHeader(u, scanned, n)
		if k >= 0 {
			body = bytes.Clone(u[:k])
			r.start += k
			return body, true, nil
		}
		scanned = next
		// A header begun inside the body and running past its end is
		// decided by the bytes after it, unless the body is a message.
		undecided := pending && len(u) >= n && !json.Valid(u[:n])
		if len(u) >= n && !undecided {
			body = bytes.Clone(u[:n])
			r.start += n
			r.shrink()
			return body, false, nil
		}
		if !r.more() {
			if u = r.unread(); len(u) >= n { // the end: an undecided header was not one
				body = bytes.Clone(u[:n])
				r.start += n
				return body, false, nil
			}
			return nil, false, io.ErrUnexpectedEOF
		}
	}
}

// shrink lets a buffer grown for a big body go once it is read.
func (r *frameReader) shrink() {
	if len(r.buf) > 1<<20 && r.end-r.start <= 64<<10 {
		r.buf = append(make([]byte, 0, 64<<10), r.unread()...)[:64<<10]
		r.end -= r.start
		r.start = 0
	}
}

// findHeader looks for a complete Content-Length header line in b starting
// at or after from and before limit. It returns its offset, or -1 and the
// offset to search from when more bytes arrive, with pending true when a
// header may be starting there (the bytes after it decide).
func findHeader(b []byte, from, limit int) (at, next int, pending bool) {
	for i := from; ; {
		j := bytes.IndexByte(b[i:], ':')
		if j < 0 {
			next, pending := headerPrefixAt(b, max(from, len(b)-len(contentLength)), limit)
			return -1, next, pending
		}
		colon := i + j
		if start := colon - len(contentLength); start >= limit {
			return -1, limit, false
		} else if start >= 0 {
			found, more := headerAt(b, start)
			if found {
				return start, 0, false
			}
			if more {
				return -1, start, true
			}
		}
		i = colon + 1
	}
}

// headerPrefixAt finds, from offset from, the start (before limit) of a
// tail of b that begins the header name — at least "cont", so that a body
// merely ending in "c" does not wait for bytes. Without one it returns
// where the next search may start.
func headerPrefixAt(b []byte, from, limit int) (int, bool) {
	for i := max(from, 0); i < min(len(b), limit); i++ {
		if tail := b[i:]; len(tail) >= 4 && strings.HasPrefix(contentLength, strings.ToLower(string(tail))) {
			return i, true
		}
	}
	return min(limit, max(from, len(b)-len(contentLength))), false
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
	return usableID(m.ID)
}

// truncatedID reads the id of a request from the start of a body that is
// not valid JSON (typically cut short by a wrong Content-Length), so the
// client's request gets its error instead of waiting forever. Only a
// top-level "id" member read before the body breaks counts.
func truncatedID(body []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil
		}
		if key == "id" {
			return usableID(value)
		}
	}
	return nil
}

// usableID keeps an id that is a number or a string.
func usableID(id json.RawMessage) json.RawMessage {
	if b := bytes.TrimSpace(id); len(b) > 0 && (b[0] == '"' || (b[0] >= '0' && b[0] <= '9') || b[0] == '-') {
		return id
	}
	return nil
}

func (s *frameStream) Close() error {
	if s.c != nil {
		return s.c.Close()
	}
	return nil
}
