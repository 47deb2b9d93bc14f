package readmodel

// The epic's state as its live runner answers it
// (docs/architecture.md#status-asks-the-live-runner): while an epic runs,
// `status <epic>` asks the runner over a unix socket in the session dir.
// A caller asking while nobody has for a while is answered by the
// runner's loop, which derives the faces' view (ViewQuery) then and
// there, with the workspace's files, the runs' folds and the branches'
// folders its steps keep — the same derivation a new process would make
// from nothing. Once asked, the runner derives the view at each of its
// steps from the step's own reads and publishes it (Publish), and the
// callers that follow are answered from it at once, beside the loop: the
// state as of the runner's last step, the one it schedules by. The answer
// is in the form asked, rendered as `status` renders it (WriteText,
// WriteJSON): the caller copies it out. No runner answering, the caller
// derives the state itself.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// servedHeader begins an answer, with its format's version and the
// length of what follows: an answer cut short, or of another version, is
// not believed (the caller derives the state itself).
const servedHeader = "saga-epic-state 1 "

const (
	// askWait bounds how long a caller waits for the runner's answer: a
	// runner in a long step (GitHub's network calls) or stopped is not
	// waited for longer — the caller derives the state itself.
	askWait = 10 * time.Second
	// answerWait bounds how long the runner writes an answer to a caller
	// that does not read it, and waits for a caller to ask.
	answerWait = 5 * time.Second
	// queued is how many callers wait for the runner's next answer at
	// most; one more is refused at once and derives the state itself.
	queued = 16
	// maxAnswer bounds an answer read (an epic of thousands of stories
	// is some megabytes).
	maxAnswer = 256 << 20
	// followed is how long after a caller asked the runner keeps
	// deriving the view at each step (Wanted): a user who follows a run
	// with `watch saga-lsp status <epic>` asks every 2 s; a runner nobody
	// asks derives nothing for them.
	followed = 30 * time.Second
)

// The forms a caller asks for, one line.
const (
	askText = "text"
	askJSON = "json"
)

// EpicSocket is where the runner of epic in root answers: in the session
// dir, which is the user's alone (runs.CheckSessionDir), named by a hash
// of the root and the epic so that the path stays within a unix socket's
// ≈ 100 bytes whatever their length.
func EpicSocket(sessionDir, root, epic string) string {
	h := sha256.Sum256([]byte(root + "\x00" + epic))
	return filepath.Join(sessionDir, "epic-"+hex.EncodeToString(h[:6])+".sock")
}

// AskRunner asks the live runner of q.Epic in q.Root for the faces' view
// of the epic's state, rendered as `status` renders it (JSON, or text);
// false when no runner answered in full in time (none runs, it is
// stopping, it failed to derive) — the caller then derives the state
// itself (LoadEpicState), which says what went wrong, if anything did.
func AskRunner(ctx context.Context, q EpicQuery, jsonOut bool) ([]byte, bool) {
	dir, err := SessionDirOf(q.SessionDir, q.Env)
	if err != nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, askWait)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", EpicSocket(dir, q.Root, q.Epic))
	if err != nil {
		return nil, false // no runner: the usual case
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	form := askText
	if jsonOut {
		form = askJSON
	}
	answer, err := readAnswer(conn, form)
	if err != nil {
		slog.Debug("the epic's runner did not answer", "epic", q.Epic, "err", err)
		return nil, false
	}
	return answer, true
}

// readAnswer asks for form and reads the answer whole.
func readAnswer(conn net.Conn, form string) ([]byte, error) {
	if _, err := io.WriteString(conn, form+"\n"); err != nil {
		return nil, err
	}
	r := bufio.NewReader(io.LimitReader(conn, maxAnswer))
	header, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(header, servedHeader), "\n"))
	if !strings.HasPrefix(header, servedHeader) || err != nil || n < 0 || n > maxAnswer {
		return nil, fmt.Errorf("not an answer of this release: %q", header)
	}
	answer := make([]byte, n)
	if _, err := io.ReadFull(r, answer); err != nil {
		return nil, fmt.Errorf("an answer cut short: %w", err)
	}
	return answer, nil
}

// EpicServer is a runner's socket: callers are answered from the view
// its loop last published (Publish), or, none published, wait until the
// loop answers them (Answer), all those waiting with one derivation.
type EpicServer struct {
	ln       net.Listener
	requests chan EpicRequest
	mu       sync.Mutex // guards closed and the queue against the drain
	closed   bool
	view     atomic.Pointer[servedView] // nil: none published
	asked    atomic.Int64               // when a caller last asked, unix nanoseconds
}

// servedView is a published state in both forms, each with its header:
// rendered once, in the loop, and never changed — the callers' goroutines
// only copy it out.
type servedView struct{ text, json []byte }

func (v *servedView) form(f string) []byte {
	if f == askJSON {
		return v.json
	}
	return v.text
}

// EpicRequest is a caller waiting for the state in its form.
type EpicRequest struct {
	conn net.Conn
	form string
}

// ServeEpicState listens on the socket of epic in root. The caller holds
// the epic's lock, so a socket already there is a dead runner's and is
// removed first — only when it is a socket: nothing else in the session
// dir is ever removed for it.
func ServeEpicState(sessionDir, root, epic string) (*EpicServer, error) {
	path := EpicSocket(sessionDir, root, epic)
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("serve the epic's state: %s is not a socket: remove it", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("serve the epic's state: a dead runner's socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("serve the epic's state: %w", err)
	}
	s := &EpicServer{ln: ln, requests: make(chan EpicRequest, queued)}
	go s.accept()
	return s, nil
}

// accept reads each caller's form beside the loop, bounded: one that
// never asks holds nothing up.
func (s *EpicServer) accept() {
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		go func() {
			_ = conn.SetReadDeadline(time.Now().Add(answerWait))
			line, err := bufio.NewReader(io.LimitReader(conn, 16)).ReadString('\n')
			form := strings.TrimSuffix(line, "\n")
			if err != nil || form != askText && form != askJSON {
				conn.Close()
				return
			}
			s.asked.Store(time.Now().UnixNano())
			if v := s.view.Load(); v != nil {
				writeAnswer(conn, v.form(form))
				return
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if !s.closed {
				select {
				case s.requests <- EpicRequest{conn, form}:
					return
				default: // a flood
				}
			}
			conn.Close() // this caller derives the state itself
		}()
	}
}

// Requests are the callers waiting; nil on a nil server, which never has
// any.
func (s *EpicServer) Requests() <-chan EpicRequest {
	if s == nil {
		return nil
	}
	return s.requests
}

// Wanted tells whether a caller asked lately (within followed): the
// runner then publishes the view at each step. A nil server wants
// nothing.
func (s *EpicServer) Wanted() bool {
	return s != nil && time.Since(time.Unix(0, s.asked.Load())) < followed
}

// Publish renders the state (title its epic's title) and answers every
// caller from it until the next Publish; st nil withdraws it — callers
// wait for the loop's Answer again. A state that does not render is
// withdrawn. st is not changed afterwards: its bytes are taken here.
func (s *EpicServer) Publish(title string, st *EpicStatus) {
	if s == nil {
		return
	}
	if st == nil {
		s.view.Store(nil)
		return
	}
	var text, js bytes.Buffer
	if err := st.WriteText(&text, title); err != nil {
		s.view.Store(nil)
		return
	}
	if err := st.WriteJSON(&js); err != nil {
		s.view.Store(nil)
		return
	}
	s.view.Store(&servedView{text: withHeader(text.Bytes()), json: withHeader(js.Bytes())})
}

func withHeader(b []byte) []byte {
	return append(fmt.Appendf(nil, "%s%d\n", servedHeader, len(b)), b...)
}

// Answer publishes the state (title its epic's title) and tells first
// and every other caller waiting now, each in its form; st nil tells them
// nothing — they derive it themselves. The writes go on beside the
// caller's loop, each bounded.
func (s *EpicServer) Answer(first EpicRequest, title string, st *EpicStatus) {
	reqs := []EpicRequest{first}
	for more := true; more; {
		select {
		case r := <-s.requests:
			reqs = append(reqs, r)
		default:
			more = false
		}
	}
	s.Publish(title, st)
	v := s.view.Load()
	for _, r := range reqs {
		if v == nil {
			r.conn.Close()
			continue
		}
		go writeAnswer(r.conn, v.form(r.form))
	}
}

// writeAnswer writes an answer to a caller, bounded, and hangs up.
func writeAnswer(conn net.Conn, b []byte) {
	defer conn.Close()
	_ = conn.SetWriteDeadline(time.Now().Add(answerWait))
	_, _ = conn.Write(b)
}

// Close stops listening, removes the socket and sends away the callers
// still waiting (they derive the state themselves). A nil server is
// closed.
func (s *EpicServer) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	s.view.Store(nil) // a stopping run's last view is not its end
	if err := s.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		slog.Debug("the epic's socket", "err", err)
	}
	for more := true; more; {
		select {
		case r := <-s.requests:
			r.conn.Close()
		default:
			more = false
		}
	}
}
