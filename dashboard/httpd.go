package dashboard

// The dashboard's HTTP server: net/http's, behind the gate of gate.go
// (which reads each connection's first request head before the server
// sees it, so connections that show no token cannot starve those that
// do). Keep-alive, the standard timeouts, and never a response nobody
// asked for: a connection idle or cut short is closed in silence
// (docs/architecture.md#dependencies says why this is net/http now).
//
// What it refuses before any page runs (checkRequest; net/http itself
// refuses a malformed request line or header, a missing or repeated Host,
// a header over maxHeaderBytes and other HTTP versions): anything but GET,
// HEAD and POST (405); a target that is not a path ("/…") or begins with
// "//" (400); a GET with a body (400); a POST sent chunked (501), without
// a Content-Length (411), or over 64 KiB (413), or not as an urlencoded
// form (400). Paths are matched segment by segment after percent-decoding:
// a segment that decodes to "", ".", ".." or holds a "/" matches no route
// (the router below; net/http's ServeMux would redirect such paths to
// their cleaned form instead of refusing them).

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const (
	maxHeaderBytes = 64 << 10
	maxBodyBytes   = 64 << 10
	// idleTimeout is how long a connection may wait for a request: a
	// browser's preconnected socket, or a kept-alive one between pages.
	idleTimeout = 2 * time.Minute
	// headTimeout is how long a request's line and header may take once
	// its first byte came (gate.go), and a form its body.
	headTimeout = 5 * time.Second
	pageTimeout = 2 * time.Minute // writing a response (an event stream sets its own deadlines)
)

type handler = http.HandlerFunc

// httpError answers code with a line of text.
func httpError(w http.ResponseWriter, msg string, code int) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	w.Write([]byte(msg + "\n"))
}

// redirect answers with a redirection to a path of the dashboard.
func redirect(w http.ResponseWriter, to string, code int) {
	w.Header().Set("Location", to)
	w.WriteHeader(code)
}

// checkRequest refuses what no page of the dashboard takes; a non-zero
// code refuses it with msg.
func checkRequest(r *http.Request) (code int, msg string) {
	if !strings.HasPrefix(r.RequestURI, "/") || strings.HasPrefix(r.RequestURI, "//") {
		return http.StatusBadRequest, "the request target must be a path"
	}
	switch r.Method {
	case "GET", "HEAD":
		if len(r.TransferEncoding) > 0 || r.ContentLength > 0 {
			return http.StatusBadRequest, "a GET has no body"
		}
	case "POST":
		switch {
		case len(r.TransferEncoding) > 0:
			return http.StatusNotImplemented, "send the form with a Content-Length"
		case len(r.Header.Values("Content-Length")) != 1:
			return http.StatusLengthRequired, "a POST needs one Content-Length"
		case r.ContentLength > maxBodyBytes:
			return http.StatusRequestEntityTooLarge, "the form is too large"
		}
		if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
			return http.StatusBadRequest, "send the form as application/x-www-form-urlencoded"
		}
	default:
		return http.StatusMethodNotAllowed, "method not allowed"
	}
	return 0, ""
}

// readForm reads a POST's form (checked by checkRequest) within
// headTimeout.
func readForm(w http.ResponseWriter, r *http.Request) error {
	if r.Method != "POST" {
		r.PostForm = url.Values{}
		return nil
	}
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(headTimeout))
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	err := r.ParseForm()
	http.NewResponseController(w).SetReadDeadline(time.Time{})
	return err
}

// ---------------------------------------------------------------------------
// Routes

type route struct {
	method string
	segs   []string // literal, "{name}", or a last "{name...}"
	h      handler
}

type router struct{ routes []route }

// handle adds "METHOD /a/{b}/c".
func (rt *router) handle(pattern string, h handler) {
	method, path, _ := strings.Cut(pattern, " ")
	rt.routes = append(rt.routes, route{method: method, segs: strings.Split(strings.TrimPrefix(path, "/"), "/"), h: h})
}

// match finds the route for the method and path; ok false with
// methodMismatch when the path matches under another method.
func (rt *router) match(method string, u *url.URL) (h handler, params map[string]string, methodMismatch bool) {
	raw := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
	segs := make([]string, len(raw))
	for i, s := range raw {
		d, err := url.PathUnescape(s)
		if err != nil || strings.ContainsAny(d, "/\\\x00") || d == "." || d == ".." || (d == "" && len(raw) > 1) {
			return nil, nil, false
		}
		segs[i] = d
	}
	for _, rt := range rt.routes {
		p, ok := rt.matches(segs)
		if !ok {
			continue
		}
		if rt.method == method || (method == "HEAD" && rt.method == "GET") {
			return rt.h, p, false
		}
		methodMismatch = true
	}
	return nil, nil, methodMismatch
}

func (rt route) matches(segs []string) (map[string]string, bool) {
	params := map[string]string{}
	for i, p := range rt.segs {
		if name, ok := strings.CutSuffix(strings.TrimPrefix(p, "{"), "...}"); ok && strings.HasPrefix(p, "{") {
			if i >= len(segs) {
				return nil, false
			}
			params[name] = strings.Join(segs[i:], "/")
			return params, true
		}
		if i >= len(segs) {
			return nil, false
		}
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			if segs[i] == "" {
				return nil, false
			}
			params[p[1:len(p)-1]] = segs[i]
		} else if p != segs[i] {
			return nil, false
		}
	}
	return params, len(segs) == len(rt.segs)
}

// ---------------------------------------------------------------------------
// The server

// httpd serves a handler on a listener, through the gate.
type httpd struct {
	gate   *gate
	srv    *http.Server
	cancel context.CancelFunc
}

// newHTTPD serves h on ln; shown tells whether a request head shows the
// token (gate.go).
func newHTTPD(ln net.Listener, h http.Handler, shown func(*http.Request) bool, log *slog.Logger) *httpd {
	ctx, cancel := context.WithCancel(context.Background())
	g := newGate(ln, shown, log)
	srv := &http.Server{
		Handler: h,
		// The gate has read the first request's head already; this bounds
		// the next ones on a kept-alive connection, from their first byte.
		ReadHeaderTimeout: headTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		// Closing the dashboard ends every request's context.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	return &httpd{gate: g, srv: srv, cancel: cancel}
}

func (d *httpd) run(log *slog.Logger) {
	go d.gate.run()
	if err := d.srv.Serve(d.gate); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("dashboard: serve", "err", err)
	}
}

// close stops accepting, ends the requests' contexts, and waits for the
// requests in flight (closing those left after grace).
func (d *httpd) close(grace time.Duration) {
	d.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if d.srv.Shutdown(ctx) != nil {
		d.srv.Close()
	}
	d.gate.Close()
}
