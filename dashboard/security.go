package dashboard

// A local web server with Run buttons is an attack surface: any web page
// the user visits can make the browser send requests to 127.0.0.1, and a
// DNS name rebound to 127.0.0.1 makes them same-origin for that name. So:
//
//   - every request needs the token: the URL the dashboard printed carries
//     it once (?token=…); the first visit sets it as an HttpOnly,
//     SameSite=Strict cookie named after the port (cookies do not tell
//     ports apart) and redirects to the same URL without it. Else 401.
//   - the Host header must be the bound address or localhost with its port:
//     a rebound name is refused (421) before anything else.
//   - requests that change something are POSTs whose Origin is the
//     dashboard itself (or, without Origin, Sec-Fetch-Site: same-origin).
//   - no CORS headers, ever; a Content-Security-Policy that allows only the
//     dashboard's own scripts, styles and connections, no framing, no
//     referrer (the token never leaks through one).

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// csp is the pages' Content-Security-Policy: nothing but the dashboard.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func newToken() string {
	b := make([]byte, 24)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// allowedHosts are the Host headers the dashboard answers: its bound
// address, and localhost (and the loopback addresses) with its port; the
// host --addr named when it listens on every address.
func allowedHosts(bound net.Addr, asked string) map[string]bool {
	hosts := map[string]bool{}
	tcp, ok := bound.(*net.TCPAddr)
	if !ok {
		hosts[strings.ToLower(bound.String())] = true
		return hosts
	}
	port := strconv.Itoa(tcp.Port)
	if !tcp.IP.IsUnspecified() {
		hosts[strings.ToLower(net.JoinHostPort(tcp.IP.String(), port))] = true
	}
	for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
		hosts[net.JoinHostPort(h, port)] = true
	}
	if h, _, err := net.SplitHostPort(asked); err == nil && h != "" {
		if ip := net.ParseIP(h); ip == nil || !ip.IsUnspecified() {
			hosts[strings.ToLower(net.JoinHostPort(h, port))] = true
		}
	}
	return hosts
}

// guard is every request's gate: what no page takes, headers, Host,
// token, same origin. A request refused before its token was checked
// closes its connection (gate.go: one without the token never stays).
func (s *Server) guard(next handler) handler {
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		refuse := func(msg string, code int) {
			h.Set("Connection", "close")
			httpError(w, msg, code)
		}
		if code, msg := checkRequest(r); code != 0 {
			if code == http.StatusMethodNotAllowed {
				h.Set("Allow", "GET, HEAD, POST")
			}
			refuse("saga-lsp dashboard: "+msg, code)
			return
		}
		if !s.hosts[strings.ToLower(r.Host)] {
			refuse("saga-lsp dashboard: this address is not the dashboard's (Host "+r.Host+" refused); open the URL it printed", http.StatusMisdirectedRequest)
			return
		}
		if t := r.URL.Query().Get("token"); t != "" && r.Method == "GET" {
			if !s.tokenOK(t) {
				refuse(unauthorized, http.StatusUnauthorized)
				return
			}
			w.Header().Add("Set-Cookie", s.cookie+"="+s.token+"; Path=/; HttpOnly; SameSite=Strict")
			// The same page without the token in the address bar or history.
			u := *r.URL
			q := u.Query()
			q.Del("token")
			u.RawQuery = q.Encode()
			u.Scheme, u.Host = "", ""
			redirect(w, u.RequestURI(), http.StatusSeeOther)
			return
		}
		if !s.cookieOK(r) {
			refuse(unauthorized, http.StatusUnauthorized)
			return
		}
		if r.Method == "POST" && !sameOrigin(r) {
			httpError(w, "saga-lsp dashboard: refused a request from another site (the dashboard's own pages send them)", http.StatusForbidden)
			return
		}
		if err := readForm(w, r); err != nil {
			refuse("saga-lsp dashboard: malformed or cut-short form", http.StatusBadRequest)
			return
		}
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(pageTimeout))
		next(w, r)
	}
}

// shown tells whether a request head shows the token, as a cookie or as
// the first visit's ?token= (gate.go).
func (s *Server) shown(r *http.Request) bool {
	if t := r.URL.Query().Get("token"); t != "" {
		return s.tokenOK(t)
	}
	return s.cookieOK(r)
}

func (s *Server) cookieOK(r *http.Request) bool {
	c, err := r.Cookie(s.cookie)
	return err == nil && s.tokenOK(c.Value)
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

const unauthorized = "saga-lsp dashboard: open the URL `saga-lsp dashboard` printed — it carries the access token"

// sameOrigin tells whether a state-changing request comes from the
// dashboard's own pages: its Origin is this very host over http, or,
// without an Origin, the browser says it is same-origin.
func sameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		return err == nil && u.Scheme == "http" && strings.EqualFold(u.Host, r.Host) && u.Path == ""
	}
	return r.Header.Get("Sec-Fetch-Site") == "same-origin"
}
