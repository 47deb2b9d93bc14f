package lsp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/test/chaos"
)

// sendBytes writes raw bytes to the server, framing or not.
func (c *client) sendBytes(b string) {
	if _, err := c.lc.Write([]byte(b)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// frame frames body with the given header block (the "\r\n\r\n" after it
// included).
func frame(header, body string) string { return header + body }

// orphanCodes returns the error codes of responses to ids the test never
// sent, in order, with their ids.
func (c *client) orphanCodes() []string {
	var out []string
	for _, m := range c.lc.Orphans() {
		if m.Error != nil {
			out = append(out, fmt.Sprintf("%d@%s", m.Error.Code, m.ID))
		}
	}
	return out
}

// TestFraming: no malformed framing desynchronises the server. After each
// bad input a well-formed request is answered, and each broken frame got
// one -32700 (with the request's id when it could be read).
func TestFraming(t *testing.T) {
	hover := `{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///x/é€😀.json"},"position":{"line":0,"character":0}}}`
	note := `{"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"off"}}`
	cl := func(n int) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n", n) }
	for _, tc := range []struct {
		name string
		in   string
		want []string // orphan error responses, "code@id"
	}{
		{"length counts characters, not bytes", frame(cl(utf8.RuneCountInString(hover)), hover), []string{"-32700@7"}},
		{"length counts characters, twice in a row", frame(cl(utf8.RuneCountInString(hover)), hover) + frame(cl(utf8.RuneCountInString(hover)), hover),
			[]string{"-32700@7", "-32700@7"}},
		{"length too long by a few bytes", frame(cl(len(note)+9), note), []string{"-32700@null"}},
		{"length far too long (50 MB) with a short body", frame(cl(50<<20), note), []string{"-32700@null"}},
		{"missing Content-Length", frame("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n", note), []string{"-32700@null"}},
		{"duplicate equal Content-Length", frame(fmt.Sprintf("Content-Length: %d\r\nContent-Length: %d\r\n\r\n", len(note), len(note)), note), nil},
		{"duplicate different Content-Length", frame(fmt.Sprintf("Content-Length: %d\r\nContent-Length: %d\r\n\r\n", len(note), len(note)+1), note), []string{"-32700@null"}},
		{"negative Content-Length", frame("Content-Length: -5\r\n\r\n", note), []string{"-32700@null"}},
		{"huge Content-Length", frame("Content-Length: 99999999999999999999\r\n\r\n", note), []string{"-32700@null"}},
		{"Content-Length over the frame limit", frame(fmt.Sprintf("Content-Length: %d\r\n\r\n", maxFrame+1), note), []string{"-32700@null"}},
		{"non-numeric Content-Length", frame("Content-Length: 12abc\r\n\r\n", note), []string{"-32700@null"}},
		{"empty Content-Length", frame("Content-Length:\r\n\r\n", note), []string{"-32700@null"}},
		{"garbage between frames", "hello, server\r\n\r\n" + frame(cl(len(note)), note), []string{"-32700@null"}},
		{"garbage glued to the header", "}}}" + frame(cl(len(note)), note), []string{"-32700@null"}},
		{"a long garbage line", strings.Repeat("x", 200<<10) + frame(cl(len(note)), note), []string{"-32700@null"}},
		{"binary garbage", "\x00\xff\xfe\r\n\x1b[2J" + frame(cl(len(note)), note), []string{"-32700@null"}},
		{"a line without a colon in the header", frame("Content-Length: "+fmt.Sprint(len(note))+"\r\nbogus\r\n\r\n", note), nil},
		{"LF-only line ends", frame(fmt.Sprintf("Content-Length: %d\n\n", len(note)), note), nil},
		{"lower-case header name", frame(fmt.Sprintf("content-length: %d\r\n\r\n", len(note)), note), nil},
		{"Content-Type first", frame(fmt.Sprintf("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n", len(note)), note), nil},
		{"blank lines between frames", "\r\n\r\n" + frame(cl(len(note)), note), nil},
		{"body not JSON", frame(cl(5), "hello"), []string{"-32700@null"}},
		{"body truncated JSON with its id", frame(cl(len(`{"jsonrpc":"2.0","id":"a b","m`)), `{"jsonrpc":"2.0","id":"a b","m`), []string{`-32700@"a b"`}},
		{"body JSON but not a message", frame(cl(2), "[]"), []string{"-32600@null"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := start(t)
			c.initialize(testkit.CopyExample(t, "workspace"), "")
			c.sendBytes(tc.in)
			if m := c.call("workspace/symbol", `{"query":"login"}`); m.Error != nil || !strings.Contains(string(m.Result), "login") {
				t.Fatalf("the request after the bad input: %+v", m)
			}
			if got := c.orphanCodes(); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("error responses %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFramingTruncatedAtEOF: a body cut short by the end of input answers
// what came before and ends the session (the client is gone) without a
// panic; so does a header cut short.
func TestFramingTruncatedAtEOF(t *testing.T) {
	for _, tail := range []string{"Content-Length: 100\r\n\r\n{\"jsonrpc\"", "Content-Length: 10", "Content-Le"} {
		c := start(t)
		c.initialize(testkit.CopyExample(t, "workspace"), "")
		id := c.send("workspace/symbol", `{"query":"login"}`)
		c.sendBytes(tail)
		if m := c.wait(id); m.Error != nil {
			t.Fatalf("request before the truncated frame: %+v", m)
		}
		c.in.Close()
		select {
		case code := <-c.exit:
			c.exit <- code
		case <-time.After(10 * time.Second):
			t.Fatalf("%q: the server did not end at EOF", tail)
		}
	}
}

// FuzzFrames: whatever bytes come first, a well-formed frame after one more
// well-formed frame is read (the first may be swallowed by what preceded
// it), every answer is a well-formed frame, and reading ends at EOF.
func FuzzFrames(f *testing.F) {
	note := `{"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"off"}}`
	for _, s := range []string{
		"", "Content-Length: 5\r\n\r\nhello", "Content-Length: -1\r\n\r\n", "Content-Length: 99999999999\r\n\r\n",
		"Content-Length: 3\r\nContent-Length: 4\r\n\r\n", "garbage\r\n\r\n", "Content-Type: x\r\n\r\n{}",
		"Content-Length: 1000\r\n\r\n{", "}}}Content-Length: 2\r\n\r\n{}", "Content-Length: 10\r\n\r\n{\"id\":1,\"é😀\"}",
		"Content-Length: " + fmt.Sprint(len(note)) + "\r\n\r\n" + note, "Content-Len", "\r\n", "Content-Length:",
	} {
		f.Add([]byte(s))
	}
	final := `{"jsonrpc":"2.0","id":"fuzz-final","method":"shutdown"}`
	f.Fuzz(func(t *testing.T, garbage []byte) {
		in := bytes.NewBuffer(garbage)
		fmt.Fprintf(in, "Content-Length: %d\r\n\r\n%s", len(note), note)
		fmt.Fprintf(in, "Content-Length: %d\r\n\r\n%s", len(final), final)
		var out bytes.Buffer
		s := newFrameStream(in, &out, nil)
		sawFinal := false
		for range 10000 {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if err := s.ReadObject(&m); err != nil {
				break
			}
			sawFinal = sawFinal || string(m.ID) == `"fuzz-final"`
		}
		if !sawFinal {
			t.Fatalf("the final frame was lost after %q", garbage)
		}
		r := bufio.NewReader(&out)
		for {
			body, err := chaos.ReadFrame(r)
			if err == io.EOF {
				break
			}
			if err != nil || !json.Valid(body) {
				t.Fatalf("an answer is not a well-formed frame: %q (%v)", body, err)
			}
		}
	})
}
