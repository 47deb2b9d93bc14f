package dashboard

// The event streams of the open pages (server-sent events): Change notices
// coalesced into one message at most every coalesce interval, queued per
// client. A client that does not read — its queue past maxQueued, or a
// write blocked for writeTimeout — is dropped, so one stuck tab never
// holds the dashboard's memory or its writers.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

const (
	maxClients   = 32
	maxQueued    = 1 << 20 // bytes queued for one client
	writeTimeout = 10 * time.Second
	// coalesce: a page's fetches of itself are serial, so a shorter wait
	// adds fetches only while the page keeps up; 100 ms was most of a live
	// change's wait (docs/architecture.md#an-epic-of-200-stories).
	coalesce = 25 * time.Millisecond
)

// notice is one message to the pages: what changed, by repository key.
type notice struct {
	Seq     uint64              `json:"seq"`
	Stories map[string][]string `json:"stories"` // repo → story ids
	Epics   map[string][]string `json:"epics"`
	Output  map[string][]string `json:"output"`
	All     []string            `json:"all"` // repos where anything may have changed
}

type hub struct {
	keyOf    func(root string) string // a repository's key; "" for an unknown root
	coalesce time.Duration            // the least time between two messages

	mu      sync.Mutex
	clients map[*client]bool
	seq     uint64
	pending map[string]*Change // by root
	timer   *time.Timer
	last    time.Time
	closed  bool
	dropped int // clients dropped for not reading (tests)
}

type client struct {
	mu     sync.Mutex
	queue  [][]byte
	size   int
	wake   chan struct{}
	gone   chan struct{}
	w      http.ResponseWriter
	rc     *http.ResponseController
	active bool // the handler has not returned
}

func newHub(keyOf func(string) string) *hub {
	return &hub{keyOf: keyOf, coalesce: coalesce, clients: map[*client]bool{}, pending: map[string]*Change{}}
}

// notify takes a Change; the open pages hear of it within coalesce.
func (h *hub) notify(c Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	p := h.pending[c.Root]
	if p == nil {
		p = &Change{Root: c.Root}
		h.pending[c.Root] = p
	}
	p.merge(c)
	if h.timer != nil {
		return
	}
	wait := h.coalesce - time.Since(h.last)
	if wait <= 0 {
		h.flushLocked()
		return
	}
	h.timer = time.AfterFunc(wait, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.timer = nil
		if !h.closed {
			h.flushLocked()
		}
	})
}

func (h *hub) flushLocked() {
	if len(h.pending) == 0 {
		return
	}
	h.seq++
	n := notice{Seq: h.seq, Stories: map[string][]string{}, Epics: map[string][]string{}, Output: map[string][]string{}, All: []string{}}
	for root, c := range h.pending {
		key := h.keyOf(root)
		if key == "" {
			continue
		}
		c.compact()
		if len(c.Stories) > 0 {
			n.Stories[key] = c.Stories
		}
		if len(c.Epics) > 0 {
			n.Epics[key] = c.Epics
		}
		if len(c.Output) > 0 {
			n.Output[key] = c.Output
		}
		if c.All {
			n.All = append(n.All, key)
		}
	}
	h.pending = map[string]*Change{}
	h.last = time.Now()
	data, _ := json.Marshal(n)
	h.sendLocked(fmt.Appendf(nil, "id: %d\nevent: change\ndata: %s\n\n", n.Seq, data))
}

// sendLocked queues msg for every client, dropping those that fell too
// far behind.
func (h *hub) sendLocked(msg []byte) {
	for c := range h.clients {
		if !c.enqueue(msg) {
			delete(h.clients, c)
			h.dropped++
		}
	}
}

// send queues one message for every client (tests send large ones).
func (h *hub) send(msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sendLocked(msg)
}

// enqueue adds msg to the client's queue; false (and the client dropped)
// when that would queue more than maxQueued.
func (c *client) enqueue(msg []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.size+len(msg) > maxQueued {
		c.dropLocked()
		return false
	}
	c.queue = append(c.queue, msg)
	c.size += len(msg)
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return true
}

// dropLocked ends the client: its handler returns, a write it is blocked
// in fails at once.
func (c *client) dropLocked() {
	select {
	case <-c.gone:
		return
	default:
	}
	close(c.gone)
	c.queue, c.size = nil, 0
	if c.active {
		c.rc.SetWriteDeadline(time.Now())
	}
}

func (c *client) take() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queue
	c.queue, c.size = nil, 0
	return q
}

// serve is GET /events: the page's event stream.
func (h *hub) serve(w http.ResponseWriter, r *http.Request) {
	c := &client{wake: make(chan struct{}, 1), gone: make(chan struct{}), w: w, rc: http.NewResponseController(w), active: true}
	h.mu.Lock()
	if h.closed || len(h.clients) >= maxClients {
		h.mu.Unlock()
		w.Header().Set("Retry-After", "5")
		httpError(w, "too many dashboard pages are open (at most 32): close some", http.StatusServiceUnavailable)
		return
	}
	h.clients[c] = true
	seq := h.seq
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.clients, c)
		h.mu.Unlock()
		c.mu.Lock()
		c.active = false
		c.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The sequence the page is at: it fetches itself when it missed one.
	if !c.write(fmt.Appendf(nil, "retry: 2000\nevent: hello\ndata: {\"seq\":%d}\n\n", seq)) {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.gone:
			return
		case <-c.wake:
			for _, msg := range c.take() {
				if !c.write(msg) {
					c.mu.Lock()
					c.dropLocked()
					c.mu.Unlock()
					return
				}
			}
		}
	}
}

// write sends msg within writeTimeout; false when the client is gone or
// the write failed. A drop while it is blocked makes it fail at once.
func (c *client) write(msg []byte) bool {
	c.mu.Lock()
	select {
	case <-c.gone:
		c.mu.Unlock()
		return false
	default:
	}
	c.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	c.mu.Unlock()
	if _, err := c.w.Write(msg); err != nil {
		return false
	}
	return c.rc.Flush() == nil
}

// close ends every stream.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
	for c := range h.clients {
		c.mu.Lock()
		c.dropLocked()
		c.mu.Unlock()
	}
	h.clients = map[*client]bool{}
}

// currentSeq is the sequence of the last notice sent.
func (h *hub) currentSeq() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

// counts are the clients now and those dropped so far.
func (h *hub) counts() (clients, dropped int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients), h.dropped
}
