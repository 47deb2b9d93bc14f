package dashboard

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hubServer is a dashboard over an empty workspace, with a cookie header
// for raw connections.
func hubServer(t *testing.T) (*Server, string, string) {
	t.Helper()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".saga", "stories"), 0o755)
	l, err := OpenLocal(root, LocalOptions{Env: func(k string) string {
		if k == "SAGA_SESSION_DIR" {
			return filepath.Join(root, "sessions")
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(Options{Sources: []Source{l.Source()}, Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		l.Close()
	})
	u, _ := url.Parse(s.URL())
	return s, u.Host, "Cookie: " + s.cookie + "=secret\r\n"
}

// openStream opens GET /events on a raw connection that reads nothing
// unless asked.
func openStream(t *testing.T, host, cookie string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /events HTTP/1.1\r\nHost: %s\r\n%s\r\n", host, cookie)
	return c, bufio.NewReader(c)
}

// A page that never reads its event stream is dropped once more than 1
// MiB waits for it; the others keep theirs.
func TestStuckClientDropped(t *testing.T) {
	s, host, cookie := hubServer(t)
	// Both are registered once their response began.
	stuck, sr := openStream(t, host, cookie)
	if st, err := http.ReadResponse(sr, nil); err != nil || st.StatusCode != 200 {
		t.Fatalf("stream: %v %v", st, err)
	}
	_, live := openStream(t, host, cookie)
	if st, err := http.ReadResponse(live, nil); err != nil || st.StatusCode != 200 {
		t.Fatalf("stream: %v %v", st, err)
	}
	// The reader reads what it is sent, and says when a message came:
	// the test sends the next one then, as fast as a reading page takes
	// them.
	got := make(chan struct{})
	ended := make(chan error, 1)
	go func() {
		for {
			line, err := live.ReadString('\n')
			if err != nil {
				ended <- err
				return
			}
			if strings.HasPrefix(line, "data: x") {
				got <- struct{}{}
			}
		}
	}()
	msg := []byte("event: change\ndata: " + strings.Repeat("x", 64<<10) + "\n\n")
	sent := 0
	for _, dropped := s.hub.counts(); dropped == 0; _, dropped = s.hub.counts() {
		if sent > 2000 { // 128 MiB: the kernel's buffers are far smaller
			t.Fatalf("the stuck client was never dropped after %d MiB", sent/16)
		}
		s.hub.send(msg)
		sent++
		select {
		case <-got:
		case err := <-ended:
			t.Fatalf("the reading client's stream ended after %d messages: %v", sent, err)
		case <-time.After(30 * time.Second):
			t.Fatalf("the reading client got nothing after %d messages", sent)
		}
	}
	t.Logf("dropped after %d messages of 64 KiB", sent)
	if n, dropped := s.hub.counts(); n != 1 || dropped != 1 {
		t.Errorf("clients %d, dropped %d; want the reader kept, the stuck one dropped", n, dropped)
	}
	// Its connection ends: what is left in the buffers, then EOF.
	stuck.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.Copy(io.Discard, sr); err != nil {
		t.Errorf("the dropped stream did not end: %v", err)
	}
	s.hub.send(msg)
	select {
	case <-got:
	case err := <-ended:
		t.Errorf("the reading client's stream ended: %v", err)
	}
}

// At most 32 pages hold a stream; the 33rd is refused until one goes.
func TestClientLimit(t *testing.T) {
	s, host, cookie := hubServer(t)
	for i := 0; i < maxClients; i++ {
		_, r := openStream(t, host, cookie)
		if res, err := http.ReadResponse(r, nil); err != nil || res.StatusCode != 200 {
			t.Fatalf("stream %d: %v %v", i, res, err)
		}
	}
	c, r := openStream(t, host, cookie)
	res, err := http.ReadResponse(r, nil)
	if err != nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("stream 33: %v %v", res, err)
	}
	c.Close()
	if n, _ := s.hub.counts(); n != maxClients {
		t.Errorf("%d clients", n)
	}
}

// Change notices are coalesced: a burst is one message. The wait is long
// here, so that a loaded machine's pause inside the burst never splits it.
func TestNoticesCoalesced(t *testing.T) {
	s, host, cookie := hubServer(t)
	s.hub.mu.Lock()
	s.hub.coalesce = 2 * time.Second
	s.hub.mu.Unlock()
	_, r := openStream(t, host, cookie)
	if res, err := http.ReadResponse(r, nil); err != nil || res.StatusCode != 200 {
		t.Fatalf("stream: %v %v", res, err)
	}
	root := s.repos[0].src.Root
	s.Notify(Change{Root: root, Stories: []string{"a"}}) // sent at once
	for i := range 50 {
		s.Notify(Change{Root: root, Stories: []string{fmt.Sprint("b", i%3)}})
	}
	var events []string
	for len(events) < 3 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			events = append(events, strings.TrimSpace(data))
		}
	}
	key := s.repos[0].key
	want := []string{`{"seq":0}`,
		`{"seq":1,"stories":{"` + key + `":["a"]},"epics":{},"output":{},"all":[]}`,
		`{"seq":2,"stories":{"` + key + `":["b0","b1","b2"]},"epics":{},"output":{},"all":[]}`}
	for i := range want {
		if events[i] != want[i] {
			t.Errorf("event %d: %s, want %s", i, events[i], want[i])
		}
	}
}
