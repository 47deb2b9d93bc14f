package readmodel

// The epic's state as its live runner answers it
// (docs/architecture.md#status-asks-the-live-runner): while an epic runs,
// `status <epic>` asks the runner over a unix socket in the session dir,
// and the runner derives the faces' view (ViewQuery) then and there, with
// the workspace's files, the runs' folds and the branches' folders its
// steps keep — the same derivation a new process would make from nothing.
// No runner answering, the caller derives the state itself.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// servedVersion is the answer's format; an answer of another is not
// believed (the caller derives the state itself).
const servedVersion = 1

const (
	// askWait bounds how long a caller waits for the runner's answer: a
	// runner in a long step (GitHub's network calls) or stopped is not
	// waited for longer — the caller derives the state itself.
	askWait = 10 * time.Second
	// answerWait bounds how long the runner writes an answer to a caller
	// that does not read it.
	answerWait = 5 * time.Second
	// queued is how many callers wait for the runner's next answer at
	// most; one more is refused at once and derives the state itself.
	queued = 16
	// maxAnswer bounds an answer read (an epic of thousands of stories
	// is some megabytes).
	maxAnswer = 256 << 20
)

// EpicSocket is where the runner of epic in root answers: in the session
// dir, which is the user's alone (runs.CheckSessionDir), named by a hash
// of the root and the epic so that the path stays within a unix socket's
// ≈ 100 bytes whatever their length.
func EpicSocket(sessionDir, root, epic string) string {
	h := sha256.Sum256([]byte(root + "\x00" + epic))
	return filepath.Join(sessionDir, "epic-"+hex.EncodeToString(h[:6])+".sock")
}

// servedState is the runner's answer on the socket.
type servedState struct {
	Version int         `json:"version"`
	Title   string      `json:"title"`
	Epic    *EpicStatus `json:"epic"`
}

// AskRunner asks the live runner of q.Epic in q.Root for the faces' view
// of the epic's state, and returns it with the epic's title; ok is false
// when no runner answered in time (none runs, it is stopping, it failed to
// derive) — the caller then derives the state itself (LoadEpicState),
// which says what went wrong, if anything did.
func AskRunner(ctx context.Context, q EpicQuery) (title string, st *EpicStatus, ok bool) {
	dir, err := SessionDirOf(q.SessionDir, q.Env)
	if err != nil {
		return "", nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, askWait)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", EpicSocket(dir, q.Root, q.Epic))
	if err != nil {
		return "", nil, false // no runner: the usual case
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetReadDeadline(dl)
	}
	var ans servedState
	if err := json.NewDecoder(io.LimitReader(conn, maxAnswer)).Decode(&ans); err != nil {
		slog.Debug("the epic's runner did not answer", "epic", q.Epic, "err", err)
		return "", nil, false
	}
	if ans.Version != servedVersion || ans.Epic == nil || ans.Epic.ID != q.Epic {
		slog.Debug("the epic's runner's answer is not believed", "epic", q.Epic, "version", ans.Version)
		return "", nil, false
	}
	return ans.Title, ans.Epic, true
}

// EpicServer is a runner's socket: callers wait on it until the runner's
// loop answers them (Answer), all those waiting with one derivation.
type EpicServer struct {
	ln       net.Listener
	requests chan net.Conn
	accepted chan struct{} // closed when accept returns
	once     sync.Once
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
	s := &EpicServer{ln: ln, requests: make(chan net.Conn, queued), accepted: make(chan struct{})}
	go s.accept()
	return s, nil
}

func (s *EpicServer) accept() {
	defer close(s.accepted)
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		select {
		case s.requests <- conn:
		default:
			conn.Close() // a flood: this caller derives the state itself
		}
	}
}

// Requests are the callers waiting; nil on a nil server, which never has
// any.
func (s *EpicServer) Requests() <-chan net.Conn {
	if s == nil {
		return nil
	}
	return s.requests
}

// Answer tells first and every other caller waiting now the state (title
// its epic's title); st nil tells them nothing — they derive it
// themselves. The writes go on beside the caller's loop, each bounded.
func (s *EpicServer) Answer(first net.Conn, title string, st *EpicStatus) {
	conns := []net.Conn{first}
	for more := true; more; {
		select {
		case c := <-s.requests:
			conns = append(conns, c)
		default:
			more = false
		}
	}
	var b []byte
	if st != nil {
		var err error
		if b, err = json.Marshal(servedState{Version: servedVersion, Title: title, Epic: st}); err != nil {
			b = nil
		}
	}
	for _, c := range conns {
		go func() {
			defer c.Close()
			if b != nil {
				_ = c.SetWriteDeadline(time.Now().Add(answerWait))
				_, _ = c.Write(b)
			}
		}()
	}
}

// Close stops listening, removes the socket and sends away the callers
// still waiting (they derive the state themselves). A nil server is
// closed.
func (s *EpicServer) Close() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		if err := s.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			slog.Debug("the epic's socket", "err", err)
		}
		<-s.accepted // none is queued after the drain
		for more := true; more; {
			select {
			case c := <-s.requests:
				c.Close()
			default:
				more = false
			}
		}
	})
}
