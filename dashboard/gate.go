package dashboard

// The gate: a net.Listener between the socket and net/http's server that
// reads each connection's first request head itself, so that connections
// which have not shown the token can never starve those which have.
//
// Every client is local, so a limit per address means nothing: any local
// process could hold the server's connections half-open and lock the user
// out. So a new connection is "pending" until its first request head is
// in: it may wait idleTimeout for its first byte (a browser preconnects
// sockets and uses them seconds later), then has headTimeout for its line
// and header. Pending connections are capped at maxPending, and when one
// more arrives the oldest is closed: a real request's head arrives within
// milliseconds of its connection, so only a connection that sends nothing,
// or too slowly, is ever evicted. A head that shows the token (its cookie
// or ?token=) moves the connection to the shown ones, capped apart
// (maxShown); one that does not is still handed to the server, which
// answers it (a 401, a 421, …) and closes it, and it stays pending, so
// evictable, until then. Nothing is ever written by the gate: a connection
// evicted or timed out is closed in silence.

import (
	"bufio"
	"bytes"
	"container/list"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

const (
	maxPending = 64  // connections that have not shown the token
	maxShown   = 256 // connections that have: the user's pages and streams
)

type gate struct {
	inner net.Listener
	shown func(*http.Request) bool
	log   *slog.Logger

	ready chan net.Conn // heads read, for the server's Accept
	done  chan struct{}
	once  sync.Once

	mu      sync.Mutex
	pending list.List // of *gateConn, oldest first
	nShown  int
}

// gateConn is a connection with the bytes the gate read replayed first.
type gateConn struct {
	net.Conn
	g    *gate
	head []byte
	elem *list.Element // in g.pending while it has not shown the token
	shown,
	closed bool
}

func newGate(ln net.Listener, shown func(*http.Request) bool, log *slog.Logger) *gate {
	return &gate{inner: ln, shown: shown, log: log, ready: make(chan net.Conn), done: make(chan struct{})}
}

// run accepts connections until the gate is closed.
func (g *gate) run() {
	for {
		c, err := g.inner.Accept()
		if err != nil {
			select {
			case <-g.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			g.log.Warn("dashboard: accept", "err", err)
			select {
			case <-g.done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		gc := &gateConn{Conn: c, g: g}
		var evict *gateConn
		g.mu.Lock()
		if g.pending.Len() >= maxPending {
			evict = g.pending.Front().Value.(*gateConn)
		}
		gc.elem = g.pending.PushBack(gc)
		g.mu.Unlock()
		if evict != nil {
			evict.Close()
		}
		go g.readHead(gc)
	}
}

// readHead reads the connection's first request head and hands the
// connection to the server; on a timeout, an eviction or the client
// going away it closes it, answering nothing.
func (g *gate) readHead(c *gateConn) {
	c.SetReadDeadline(time.Now().Add(idleTimeout))
	buf := make([]byte, 0, 4096)
	for first := true; ; first = false {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := c.Conn.Read(buf[len(buf):cap(buf)])
		if n > 0 && first {
			c.SetReadDeadline(time.Now().Add(headTimeout))
		}
		buf = buf[:len(buf)+n]
		if bytes.Contains(buf, []byte("\r\n\r\n")) || bytes.Contains(buf, []byte("\n\n")) || len(buf) >= maxHeaderBytes {
			break
		}
		if err != nil {
			c.Close()
			return
		}
	}
	c.SetReadDeadline(time.Time{})
	c.head = buf
	// A head net/http would refuse is handed over all the same: the
	// server answers it.
	r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(buf)))
	if err == nil && g.shown(r) {
		g.mu.Lock()
		full := g.nShown >= maxShown
		if !full && !c.closed {
			g.pending.Remove(c.elem)
			c.elem, c.shown = nil, true
			g.nShown++
		}
		g.mu.Unlock()
		if full {
			g.log.Warn("dashboard: too many connections with the token; closing a new one", "max", maxShown)
			c.Close()
			return
		}
	}
	select {
	case g.ready <- c:
	case <-g.done:
		c.Close()
	}
}

func (c *gateConn) Read(p []byte) (int, error) {
	if len(c.head) > 0 {
		n := copy(p, c.head)
		c.head = c.head[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// Close closes the connection and frees its place.
func (c *gateConn) Close() error {
	g := c.g
	g.mu.Lock()
	if !c.closed {
		c.closed = true
		if c.elem != nil {
			g.pending.Remove(c.elem)
			c.elem = nil
		}
		if c.shown {
			g.nShown--
		}
	}
	g.mu.Unlock()
	return c.Conn.Close()
}

// Accept is the server's: the next connection whose head is in.
func (g *gate) Accept() (net.Conn, error) {
	select {
	case c := <-g.ready:
		return c, nil
	case <-g.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting and closes the connections still pending.
func (g *gate) Close() error {
	g.once.Do(func() {
		close(g.done)
		g.inner.Close()
		g.mu.Lock()
		var open []*gateConn
		for e := g.pending.Front(); e != nil; e = e.Next() {
			open = append(open, e.Value.(*gateConn))
		}
		g.mu.Unlock()
		for _, c := range open {
			c.Close()
		}
	})
	return nil
}

func (g *gate) Addr() net.Addr { return g.inner.Addr() }

// counts are the connections pending and shown (tests).
func (g *gate) counts() (pending, shown int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pending.Len(), g.nShown
}
