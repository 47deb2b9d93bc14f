package dashboard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// rawRequest sends text on a new connection and returns the response's
// status code and body.
func rawRequest(t *testing.T, host, text string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c, text)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// TestHTTPRefusals: what the dashboard's server refuses before any page
// runs, and what it accepts.
func TestHTTPRefusals(t *testing.T) {
	// Parallel: its last case waits headTimeout out (a server of its own).
	t.Parallel()
	_, host, cookie := hubServer(t)
	big := strings.Repeat("x", 70<<10)
	for _, tc := range []struct {
		name, req string
		want      int
	}{
		{"a page", "GET /problems HTTP/1.1\r\nHost: " + host + "\r\n" + cookie + "\r\n", 200},
		{"HEAD", "HEAD / HTTP/1.1\r\nHost: " + host + "\r\n" + cookie + "\r\n", 200},
		{"HTTP/1.0", "GET / HTTP/1.0\r\nHost: " + host + "\r\n" + cookie + "\r\n", 200},
		{"no Host", "GET / HTTP/1.1\r\n" + cookie + "\r\n", 400},
		{"two Hosts", "GET / HTTP/1.1\r\nHost: " + host + "\r\nHost: " + host + "\r\n" + cookie + "\r\n", 400},
		{"HTTP/2 text", "GET / HTTP/2.0\r\nHost: " + host + "\r\n\r\n", 505},
		{"absolute target", "GET http://" + host + "/ HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 400},
		{"// target", "GET //evil/ HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 400},
		{"PUT", "PUT / HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 0\r\n\r\n", 405},
		{"lower-case method", "get / HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 405},
		{"huge header", "GET / HTTP/1.1\r\nHost: " + host + "\r\nX: " + big + "\r\n\r\n", 431},
		{"chunked POST", "POST /ack HTTP/1.1\r\nHost: " + host + "\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501},
		{"POST without length", "POST /ack HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 411},
		{"huge POST", "POST /ack HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 999999\r\n\r\n", 413},
		{"GET with a body", "GET / HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 5\r\n\r\nhello", 400},
		{"encoded slash", "GET /r/%2e%2e/story/x HTTP/1.1\r\nHost: " + host + "\r\n" + cookie + "\r\n", 404},
		{"dot segment", "GET /assets/vendor/../app.js HTTP/1.1\r\nHost: " + host + "\r\n" + cookie + "\r\n", 404},
		{"empty segment", "GET /problems/ HTTP/1.1\r\nHost: " + host + "\r\n" + cookie + "\r\n", 404},
		{"asset", "GET /assets/vendor/dagre.min.js HTTP/1.1\r\nHost: " + host + "\r\n" + cookie + "\r\n", 200},
		{"npm folder", "GET /assets/npm/package.json HTTP/1.1\r\nHost: " + host + "\r\n" + cookie + "\r\n", 404},
		{"GET of a POST route", "GET /ack HTTP/1.1\r\nHost: " + host + "\r\n" + cookie + "\r\n", 405},
	} {
		if got, body := rawRequest(t, host, tc.req); got != tc.want {
			t.Errorf("%s: %d, want %d\n%.300s", tc.name, got, tc.want, body)
		}
	}
	// A client that never ends its header gets no response: its
	// connection is closed once headTimeout has passed.
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\n")
	c.SetReadDeadline(time.Now().Add(headTimeout + 20*time.Second))
	if got, err := io.ReadAll(c); err != nil || len(got) != 0 {
		t.Errorf("a client that never ends its header: %q %v, want the connection closed with nothing written", got, err)
	}
}

// TestKeepAlive: pages and assets on one connection, one after the
// other, the connection kept open between them.
func TestKeepAlive(t *testing.T) {
	t.Parallel()
	_, host, cookie := hubServer(t)
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	for _, path := range []string{"/", "/problems", "/assets/app.js", "/"} {
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", path, host, cookie)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("GET %s on a kept-alive connection: %v", path, err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || res.Close {
			t.Errorf("GET %s: %s, close %v", path, res.Status, res.Close)
		}
	}
}

// TestPreconnectedSocketIdle: a socket a browser opened ahead of time and
// used 15 s later gets its page — never an answer it did not ask for
// (issue 33: "saga-lsp dashboard: no request line" after 10 s).
func TestPreconnectedSocketIdle(t *testing.T) {
	// Parallel: 15 s of a timer, with a server of its own.
	t.Parallel()
	_, host, cookie := hubServer(t)
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The idle time is the behaviour under test: a timer, not a wait for
	// anything. Nothing may arrive on the socket meanwhile.
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	var b [1]byte
	if n, err := c.Read(b[:]); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("an idle socket: read %d bytes, %v; want nothing until it is used", n, err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n%s\r\n", host, cookie)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the request on the socket idle 15 s: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(body), "<html") {
		t.Errorf("the request on the socket idle 15 s: %s\n%.300s", res.Status, body)
	}
}

// TestUnauthenticatedCannotStarve: 200 connections without the token held
// half-open (some silent, some with half a header) while the user's
// requests, with the token, still answer within 1 s each.
func TestUnauthenticatedCannotStarve(t *testing.T) {
	s, host, _ := hubServer(t)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := range 200 {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		if i%2 == 1 {
			fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n", host)
		}
	}
	jar := map[string]string{"Cookie": s.cookie + "=secret"}
	for i := range 5 {
		// Each request on a connection of its own, as a new tab's.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+host+"/problems", nil)
		req.Header.Set("Cookie", jar["Cookie"])
		res, err := client.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("request %d with 200 unauthenticated connections held: %v", i, err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		cancel()
		if res.StatusCode != 200 {
			t.Errorf("request %d: %s", i, res.Status)
		}
		// And more unauthenticated ones arrive meanwhile.
		if c, err := net.Dial("tcp", host); err == nil {
			held = append(held, c)
		}
	}
	if pending, _ := s.httpd.gate.counts(); pending > maxPending {
		t.Errorf("%d connections pending, cap %d", pending, maxPending)
	}
}

func TestEscape(t *testing.T) {
	in := `<script>a&b</script>"'` + "\x00"
	if got, want := escapeHTML(in), "&lt;script&gt;a&amp;b&lt;/script&gt;&#34;&#39;\uFFFD"; got != want {
		t.Errorf("escape %q = %q, want %q", in, got, want)
	}
}
