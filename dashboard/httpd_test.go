package dashboard

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
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
		{"lower-case method", "get / HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 400},
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
	// A slow client gets nothing but its header timeout: the server moves on.
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\n")
	c.SetReadDeadline(time.Now().Add(headerTimeout + 10*time.Second))
	if res, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || res.StatusCode != 400 {
		t.Errorf("a client that never ends its header: %v %v", res, err)
	}
}

func TestEscape(t *testing.T) {
	in := `<script>a&b</script>"'` + "\x00"
	if got, want := escapeHTML(in), "&lt;script&gt;a&amp;b&lt;/script&gt;&#34;&#39;\uFFFD"; got != want {
		t.Errorf("escape %q = %q, want %q", in, got, want)
	}
}
