package dashboard

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/stats"
	"github.com/saga-ai/saga-lsp/store"
)

// DefaultAddr is where a dashboard listens unless told otherwise: the
// loopback address, a free port.
const DefaultAddr = "127.0.0.1:0"

// Options configure a dashboard.
type Options struct {
	Sources []Source // the repositories, in the order shown
	// Addr is host:port to listen on; "" is DefaultAddr. A port of 0
	// picks a free one.
	Addr   string
	Env    func(string) string // the run protocol's variables (session dir, tmux socket, …); nil is os.Getenv
	Parser *store.Parser       // default store.NewParser()
	Log    *slog.Logger        // nil discards
	// Token is the access token; "" makes a random one (tests set it).
	Token string
}

// Server is a running dashboard.
type Server struct {
	env    func(string) string
	parser *store.Parser
	log    *slog.Logger

	repos  []*repo
	byKey  map[string]*repo
	byRoot map[string]*repo

	token, cookie string
	ln            net.Listener
	hosts         map[string]bool
	url           string
	loopback      bool
	httpd         *httpd
	hub           *hub
	out           *outputWatcher

	ackMu sync.Mutex
	acked map[string]bool

	done chan struct{}
	once sync.Once
}

// repo is one repository served, with the key its URLs use.
type repo struct {
	key string
	src Source
	// setup is the root's run configuration, resolved once when the
	// dashboard starts: every Run and Stop hands it down.
	setup control.Setup
	// counts are check's error and warning counts of the last snapshot
	// asked about: a snapshot is immutable, so they are counted once.
	counts atomic.Pointer[problemCounts]
	// landing is set while a Land action runs: one at a time (land.go).
	landing atomic.Bool
	// records decodes the run records a page counts (an epic's outcome)
	// again only when they changed: a live epic's page is fetched at
	// every change.
	records runs.RunCache
	// outcomes keeps each epic's outcome while no record changed.
	outcomes stats.Memo
}

type problemCounts struct {
	ws               *store.Workspace
	errors, warnings int
}

// problemCounts are ws's errors and warnings, counted once per snapshot.
func (r *repo) problemCounts(ws *store.Workspace) (errors, warnings int) {
	if c := r.counts.Load(); c != nil && c.ws == ws {
		return c.errors, c.warnings
	}
	c := &problemCounts{ws: ws}
	for _, d := range ws.Diagnostics() {
		switch d.Severity {
		case store.SeverityError:
			c.errors++
		case store.SeverityWarning:
			c.warnings++
		}
	}
	r.counts.Store(c)
	return c.errors, c.warnings
}

// Start listens and serves the sources; it returns once the address is
// bound. The caller closes it (and then its sources).
func Start(o Options) (*Server, error) {
	if len(o.Sources) == 0 {
		return nil, errors.New("dashboard: no repository to show")
	}
	if o.Env == nil {
		o.Env = os.Getenv
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Parser == nil {
		p, err := store.NewParser()
		if err != nil {
			return nil, err
		}
		o.Parser = p
	}
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.Token == "" {
		o.Token = newToken()
	}
	s := &Server{env: o.Env, parser: o.Parser, log: o.Log, byKey: map[string]*repo{}, byRoot: map[string]*repo{},
		token: o.Token, acked: map[string]bool{}, done: make(chan struct{})}
	for _, src := range o.Sources {
		key := repoKey(src.Root, s.byKey)
		r := &repo{key: key, src: src}
		if src.Setup != nil {
			r.setup = *src.Setup
		} else {
			r.setup = github.NewSetup(src.Root, s.env)
		}
		s.repos = append(s.repos, r)
		s.byKey[key] = r
		s.byRoot[src.Root] = r
	}
	s.hub = newHub(func(root string) string {
		if r := s.byRoot[root]; r != nil {
			return r.key
		}
		return ""
	})
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("dashboard: listen on %s: %w", o.Addr, err)
	}
	s.ln = ln
	tcp := ln.Addr().(*net.TCPAddr)
	s.loopback = tcp.IP.IsLoopback()
	s.hosts = allowedHosts(ln.Addr(), o.Addr)
	s.cookie = "saga-dashboard-" + strconv.Itoa(tcp.Port)
	host := ln.Addr().String()
	if tcp.IP.IsUnspecified() {
		host = net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
	}
	s.url = "http://" + host + "/?token=" + s.token
	s.out = newOutputWatcher(s)
	s.httpd = newHTTPD(ln, s.guard(s.routes()), s.shown, s.log)
	for _, r := range s.repos {
		if r.src.Bind != nil {
			r.src.Bind(s.Notify)
		}
	}
	go s.httpd.run(s.log)
	s.out.update()
	return s, nil
}

// URL is the address to open, with the access token.
func (s *Server) URL() string { return s.url }

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Loopback tells whether the dashboard listens on a loopback address only.
func (s *Server) Loopback() bool { return s.loopback }

// Done is closed when the dashboard was closed.
func (s *Server) Done() <-chan struct{} { return s.done }

// Notify tells the open pages that something changed in a repository.
func (s *Server) Notify(c Change) {
	select {
	case <-s.done:
		return
	default:
	}
	s.hub.notify(c)
	if len(c.Output) == 0 {
		s.out.update() // which workers run may have changed
	}
}

// Close stops serving: the event streams end, requests in flight get a
// few seconds.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		close(s.done)
		s.hub.close()
		s.out.close()
		s.httpd.close(5 * time.Second)
	})
	return err
}

// repoKey names a repository in URLs: its folder's name (letters,
// digits, '.', '_' and '-'; '-' for the rest), made unique.
func repoKey(root string, taken map[string]*repo) string {
	base := strings.Map(func(r rune) rune {
		if r < 128 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '-'
	}, filepath.Base(root))
	if base == "" || base == "." || base == ".." {
		base = "repo"
	}
	key := base
	for i := 2; taken[key] != nil; i++ {
		key = fmt.Sprintf("%s-%d", base, i)
	}
	return key
}

// routes are the dashboard's pages, fragments, actions and assets.
func (s *Server) routes() handler {
	rt := &router{}
	rt.handle("GET /", s.home)
	rt.handle("GET /problems", s.problems)
	rt.handle("GET /r/{repo}/epic/{id}", s.epic)
	rt.handle("GET /r/{repo}/story/{id}", s.story)
	rt.handle("GET /r/{repo}/story/{id}/output", s.storyOutput)
	rt.handle("GET /r/{repo}/story/{id}/review", s.review)
	rt.handle("POST /r/{repo}/story/{id}/{op}", s.storyAction)
	rt.handle("POST /r/{repo}/epic/{id}/{op}", s.epicAction)
	rt.handle("POST /ack", s.ack)
	rt.handle("GET /events", s.hub.serve)
	rt.handle("GET /assets/{name...}", serveAsset)
	return func(w http.ResponseWriter, r *http.Request) {
		h, params, wrongMethod := rt.match(r.Method, r.URL)
		switch {
		case h != nil:
			for k, v := range params {
				r.SetPathValue(k, v)
			}
			h(w, r)
		case wrongMethod:
			w.Header().Set("Allow", "GET, HEAD, POST")
			httpError(w, "saga-lsp dashboard: method not allowed", http.StatusMethodNotAllowed)
		default:
			s.notFound(w, r, "no such page")
		}
	}
}
