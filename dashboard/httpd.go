package dashboard

// The dashboard's HTTP server: HTTP/1.1 on net, one request per
// connection, the request read with net/textproto.
//
// Why not net/http: its server, once reachable, links crypto/tls, x509,
// HTTP/2 and their package initialisation into every saga-lsp process;
// measured, it cost the hook ~0.6 ms at each start (+240 interface tables,
// +4.7 MB) against a budget of 2× an empty Go program's start
// (docs/architecture.md#dependencies). The dashboard needs far less: a
// loopback server for one user's browser, GET and POST of small forms,
// responses ended by closing the connection (so no chunking and no
// keep-alive), and one long-lived event stream per page.
//
// What it refuses: anything but GET, HEAD and POST (405); a request line
// or headers over 64 KiB together (431), or not read within 10 s; a target
// that is not a path ("/…") or begins with "//" (400); a request without
// exactly one Host (400); a body with Transfer-Encoding (501) or without a
// Content-Length (411), or over 64 KiB (413); HTTP versions but 1.0 and
// 1.1 (505). Paths are matched segment by segment after percent-decoding:
// a segment that decodes to "", ".", ".." or holds a "/" matches no route.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Status codes the dashboard answers with.
const (
	statusOK                  = 200
	statusSeeOther            = 303
	statusBadRequest          = 400
	statusUnauthorized        = 401
	statusForbidden           = 403
	statusNotFound            = 404
	statusMethodNotAllowed    = 405
	statusConflict            = 409
	statusLengthRequired      = 411
	statusTooLarge            = 413
	statusMisdirected         = 421
	statusPreconditionReq     = 428
	statusHeadersTooLarge     = 431
	statusInternalError       = 500
	statusNotImplemented      = 501
	statusUnavailable         = 503
	statusVersionNotSupported = 505
)

// statusText is a status code's reason phrase (a switch, not a map: no
// table is built when a saga-lsp process starts).
func statusText(code int) string {
	switch code {
	case statusOK:
		return "OK"
	case statusSeeOther:
		return "See Other"
	case statusBadRequest:
		return "Bad Request"
	case statusUnauthorized:
		return "Unauthorized"
	case statusForbidden:
		return "Forbidden"
	case statusNotFound:
		return "Not Found"
	case statusMethodNotAllowed:
		return "Method Not Allowed"
	case statusConflict:
		return "Conflict"
	case statusLengthRequired:
		return "Length Required"
	case statusTooLarge:
		return "Content Too Large"
	case statusMisdirected:
		return "Misdirected Request"
	case statusPreconditionReq:
		return "Precondition Required"
	case statusHeadersTooLarge:
		return "Request Header Fields Too Large"
	case statusNotImplemented:
		return "Not Implemented"
	case statusUnavailable:
		return "Service Unavailable"
	case statusVersionNotSupported:
		return "HTTP Version Not Supported"
	}
	return "Internal Server Error"
}

const (
	maxHeaderBytes = 64 << 10
	maxBodyBytes   = 64 << 10
	headerTimeout  = 10 * time.Second
	pageTimeout    = 2 * time.Minute // writing a response (an event stream sets its own deadlines)
	maxConns       = 128
)

// request is an HTTP request as a handler sees it.
type request struct {
	Method string
	Host   string
	URL    *url.URL
	Header textproto.MIMEHeader
	Form   url.Values // a POST's form
	ctx    context.Context
	params map[string]string
	query  url.Values
}

// PathValue is the path segment the route named.
func (r *request) PathValue(name string) string { return r.params[name] }

// Context ends when the client goes away or the server closes.
func (r *request) Context() context.Context { return r.ctx }

// Query is the URL's query, parsed once.
func (r *request) Query() url.Values {
	if r.query == nil {
		r.query, _ = url.ParseQuery(r.URL.RawQuery)
	}
	return r.query
}

// cookie is the value of the named cookie.
func (r *request) cookie(name string) (string, bool) {
	for _, line := range r.Header.Values("Cookie") {
		for part := range strings.SplitSeq(line, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
			if ok && k == name {
				return strings.Trim(v, `"`), true
			}
		}
	}
	return "", false
}

// response writes one response; the connection closes after it.
type response struct {
	conn   net.Conn
	bw     *bufio.Writer
	header textproto.MIMEHeader
	status int
	wrote  bool
	head   bool // HEAD: headers only
	err    error
}

// Header is the response's header, set before the first write.
func (w *response) Header() textproto.MIMEHeader { return w.header }

// WriteHeader writes the status line and the header.
func (w *response) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote, w.status = true, code
	text := statusText(code)
	fmt.Fprintf(w.bw, "HTTP/1.1 %d %s\r\n", code, text)
	w.header.Set("Connection", "close")
	keys := make([]string, 0, len(w.header))
	for k := range w.header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range w.header[k] {
			// Values are ours; a line break would start a header of its own.
			v = strings.NewReplacer("\r", " ", "\n", " ").Replace(v)
			fmt.Fprintf(w.bw, "%s: %s\r\n", k, v)
		}
	}
	w.bw.WriteString("\r\n")
}

func (w *response) Write(p []byte) (int, error) {
	if ok, n, err := w.writable(len(p)); !ok {
		return n, err
	}
	n, err := w.bw.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// WriteString writes s without a copy ([]byte(s) allocated every string
// a page is made of: ~0.8 MB for W's home page).
func (w *response) WriteString(s string) (int, error) {
	if ok, n, err := w.writable(len(s)); !ok {
		return n, err
	}
	n, err := w.bw.WriteString(s)
	if err != nil {
		w.err = err
	}
	return n, err
}

// writable sends the header if not yet sent, and tells whether n bytes of
// body go on the wire (not after an error, nor for a HEAD request).
func (w *response) writable(n int) (bool, int, error) {
	if !w.wrote {
		w.WriteHeader(statusOK)
	}
	if w.err != nil {
		return false, 0, w.err
	}
	if w.head {
		return false, n, nil
	}
	return true, 0, nil
}

// Flush sends what is buffered.
func (w *response) Flush() error {
	if !w.wrote {
		w.WriteHeader(statusOK)
	}
	if err := w.bw.Flush(); err != nil {
		w.err = err
		return err
	}
	return w.err
}

// SetWriteDeadline bounds the writes to come (an event stream's).
func (w *response) SetWriteDeadline(t time.Time) error { return w.conn.SetWriteDeadline(t) }

// httpError answers code with a line of text.
func httpError(w *response, msg string, code int) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	w.WriteString(msg + "\n")
}

// redirect answers with a redirection to a path of the dashboard.
func redirect(w *response, to string, code int) {
	w.Header().Set("Location", to)
	w.WriteHeader(code)
}

// ---------------------------------------------------------------------------
// Routes

type handler func(w *response, r *request)

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
// Connections

// httpd serves a router on a listener.
type httpd struct {
	ln      net.Listener
	serve   handler // the guard around the router
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	conns   map[net.Conn]bool
	closed  bool
	wg      sync.WaitGroup
	onError func(msg string, args ...any)
}

func newHTTPD(ln net.Listener, serve handler, onError func(string, ...any)) *httpd {
	ctx, cancel := context.WithCancel(context.Background())
	return &httpd{ln: ln, serve: serve, ctx: ctx, cancel: cancel, conns: map[net.Conn]bool{}, onError: onError}
}

func (d *httpd) run() {
	for {
		c, err := d.ln.Accept()
		if err != nil {
			d.mu.Lock()
			closed := d.closed
			d.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return
			}
			d.onError("dashboard: accept", "err", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		d.mu.Lock()
		if d.closed || len(d.conns) >= maxConns {
			d.mu.Unlock()
			c.Close()
			continue
		}
		d.conns[c] = true
		d.wg.Add(1)
		d.mu.Unlock()
		go d.conn(c)
	}
}

// close stops accepting, ends the requests' contexts, and waits for the
// connections (closing those left after grace).
func (d *httpd) close(grace time.Duration) {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.ln.Close()
	d.cancel()
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	d.mu.Lock()
	for c := range d.conns {
		c.Close()
	}
	d.mu.Unlock()
	<-done
}

func (d *httpd) conn(c net.Conn) {
	defer func() {
		if p := recover(); p != nil {
			d.onError("dashboard: panic serving a request", "panic", p)
		}
		c.Close()
		d.mu.Lock()
		delete(d.conns, c)
		d.mu.Unlock()
		d.wg.Done()
	}()
	c.SetReadDeadline(time.Now().Add(headerTimeout))
	lr := &io.LimitedReader{R: c, N: maxHeaderBytes} // the body's length is added once known
	br := bufio.NewReaderSize(lr, 4096)
	w := &response{conn: c, bw: bufio.NewWriterSize(c, 32<<10), header: textproto.MIMEHeader{}}
	c.SetWriteDeadline(time.Now().Add(pageTimeout))
	r, code, msg := readRequest(br, lr, w)
	if code != 0 {
		httpError(w, "saga-lsp dashboard: "+msg, code)
		w.Flush()
		return
	}
	c.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithCancel(d.ctx)
	defer cancel()
	r.ctx = ctx
	// The client going away ends the request's context: nothing more is
	// read from a connection that carries one request.
	go func() {
		var b [1]byte
		c.Read(b[:])
		cancel()
	}()
	w.head = r.Method == "HEAD"
	d.serve(w, r)
	w.Flush()
}

// readRequest reads a request line, its header and a POST's form; a
// non-zero code refuses it with msg.
func readRequest(br *bufio.Reader, lr *io.LimitedReader, w *response) (r *request, code int, msg string) {
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	if err != nil {
		return nil, statusBadRequest, "no request line"
	}
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || method == "" || strings.Trim(method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return nil, statusBadRequest, "malformed request line"
	}
	if proto != "HTTP/1.1" && proto != "HTTP/1.0" {
		return nil, statusVersionNotSupported, "HTTP/1.1 only"
	}
	if !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "//") {
		return nil, statusBadRequest, "the request target must be a path"
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return nil, statusBadRequest, "malformed request target"
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, statusHeadersTooLarge, "request header too large or cut short"
		}
		return nil, statusBadRequest, "malformed request header"
	}
	hosts := hdr.Values("Host")
	if len(hosts) != 1 {
		return nil, statusBadRequest, "a request needs exactly one Host header"
	}
	r = &request{Method: method, Host: hosts[0], URL: u, Header: hdr, Form: url.Values{}}
	switch method {
	case "GET", "HEAD":
		if hdr.Get("Transfer-Encoding") != "" || (hdr.Get("Content-Length") != "" && hdr.Get("Content-Length") != "0") {
			return nil, statusBadRequest, "a GET has no body"
		}
	case "POST":
		if hdr.Get("Transfer-Encoding") != "" {
			return nil, statusNotImplemented, "send the form with a Content-Length"
		}
		cl := hdr.Values("Content-Length")
		if len(cl) != 1 {
			return nil, statusLengthRequired, "a POST needs one Content-Length"
		}
		n, err := strconv.ParseInt(cl[0], 10, 64)
		if err != nil || n < 0 {
			return nil, statusBadRequest, "malformed Content-Length"
		}
		if n > maxBodyBytes {
			return nil, statusTooLarge, "the form is too large"
		}
		if strings.EqualFold(hdr.Get("Expect"), "100-continue") {
			w.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
			w.bw.Flush()
		}
		lr.N += n
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return nil, statusBadRequest, "the form was cut short"
		}
		if ct := hdr.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
			return nil, statusBadRequest, "send the form as application/x-www-form-urlencoded"
		}
		if r.Form, err = url.ParseQuery(string(body)); err != nil {
			return nil, statusBadRequest, "malformed form"
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		return nil, statusMethodNotAllowed, "method not allowed"
	}
	return r, 0, ""
}
