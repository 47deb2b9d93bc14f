//go:build unix

package cli_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"
	"golang.org/x/term"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// onTerminal runs the binary with stdin, stdout and stderr on a
// pseudo-terminal, as in an interactive shell, and returns what it wrote
// (both streams, as the terminal shows them) and its exit code. env
// replaces the variables it names.
func onTerminal(t *testing.T, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(testkit.Binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(withoutVars(os.Environ(), "NO_COLOR", "TERM"), env...)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	// Read until the terminal closes: on Linux the last read after the
	// child exits fails with EIO.
	out, err := io.ReadAll(tty)
	if err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatal(err)
	}
	code := exitCode(t, cmd.Wait())
	// The terminal turns "\n" into "\r\n".
	return strings.ReplaceAll(string(out), "\r\n", "\n"), code
}

func withoutVars(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+name+" ") {
			out = append(out, kv)
		}
	}
	return out
}

// Colour on a terminal: the location bold, errors red, warnings yellow;
// none when NO_COLOR is set, TERM is dumb, or stdout is a pipe.
func TestCheckColour(t *testing.T) {
	bad := examples(t, "mistakes")
	const (
		errorLine   = "\x1b[1m.saga/stories/billing--invoices/send-emails.json:6:31:\x1b[0m \x1b[31merror\x1b[0m: no task \"creat-pdf\" in story \"billing--invoices\"; did you mean \"create-pdf\"? [unknown-dependency]"
		warningLine = "\x1b[1m.saga/stories/billing--invoices/send-emails.json:7:3:\x1b[0m \x1b[33mwarning\x1b[0m: unknown property \"blockedby\""
		summary     = "\x1b[31m12 errors\x1b[0m, \x1b[33m6 warnings\x1b[0m, 0 info in 9 files"
		plainError  = ".saga/stories/billing--invoices/send-emails.json:6:31: error: no task \"creat-pdf\""
	)
	for _, tc := range []struct {
		name   string
		env    []string
		colour bool
	}{
		{"terminal", []string{"TERM=xterm-256color"}, true},
		{"terminal without TERM", nil, true},
		{"NO_COLOR", []string{"TERM=xterm-256color", "NO_COLOR=1"}, false},
		{"NO_COLOR=0 is set too", []string{"TERM=xterm-256color", "NO_COLOR=0"}, false},
		{"empty NO_COLOR", []string{"TERM=xterm-256color", "NO_COLOR="}, true},
		{"TERM=dumb", []string{"TERM=dumb"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := onTerminal(t, bad, tc.env, "check")
			if code != 1 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			if tc.colour {
				for _, want := range []string{errorLine, warningLine, summary} {
					if !strings.Contains(out, want) {
						t.Errorf("no %q in:\n%q", want, out)
					}
				}
				return
			}
			if strings.Contains(out, "\x1b[") || !strings.Contains(out, plainError) {
				t.Errorf("want plain text:\n%q", out)
			}
		})
	}
	t.Run("pipe", func(t *testing.T) {
		cmd := exec.Command(testkit.Binary(t), "check")
		cmd.Dir = bad
		cmd.Env = append(withoutVars(os.Environ(), "NO_COLOR", "TERM"), "TERM=xterm-256color")
		out, _ := cmd.Output()
		if bytes.Contains(out, []byte("\x1b[")) || !bytes.Contains(out, []byte(plainError)) {
			t.Errorf("want plain text on a pipe:\n%q", out)
		}
	})
	t.Run("json and github never", func(t *testing.T) {
		for _, format := range []string{"json", "github"} {
			out, _ := onTerminal(t, bad, []string{"TERM=xterm-256color"}, "check", "--format", format)
			if strings.Contains(out, "\x1b[") {
				t.Errorf("--format %s has escape sequences:\n%q", format, out)
			}
		}
	})
}

// A bare saga-lsp typed at a terminal explains itself instead of waiting
// for LSP frames.
func TestBareOnTerminalPrintsHelp(t *testing.T) {
	out, code := onTerminal(t, t.TempDir(), []string{"TERM=xterm-256color"})
	if code != 0 || !strings.HasPrefix(out, "saga-lsp is SAGA's language server") ||
		!strings.Contains(out, "usage: saga-lsp <command> [flags] [args]") || !strings.Contains(out, "  check ") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// `saga-lsp hook` typed at a terminal says where the payload comes from
// at once (exit 0, as every hook).
func TestHookOnTerminal(t *testing.T) {
	out, code := onTerminal(t, t.TempDir(), nil, "hook")
	if code != 0 || !strings.HasPrefix(out, "saga-lsp hook: stdin is a terminal") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// A bare saga-lsp on pipes is the language server (editors start it so),
// as is serve on a terminal.
func TestBareOnPipeServes(t *testing.T) {
	t.Run("pipe", func(t *testing.T) {
		cmd := exec.Command(testkit.Binary(t))
		cmd.Dir = t.TempDir()
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		writeFrame(t, stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`)
		body := readFrame(t, bufio.NewReader(stdout))
		if !strings.Contains(body, `"id":1`) || !strings.Contains(body, `"capabilities"`) {
			t.Errorf("initialize answered %s", body)
		}
		stdin.Close() // end of input: the server exits
		exitCode(t, cmd.Wait())
	})
	t.Run("serve with stdin a terminal", func(t *testing.T) {
		ptm, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer ptm.Close()
		defer tty.Close()
		// Raw mode: the terminal passes the frames through unchanged (no
		// line buffering, no echo).
		if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(testkit.Binary(t), "serve")
		cmd.Dir = t.TempDir()
		cmd.Stdin = tty
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		out := bufio.NewReader(stdout)
		writeFrame(t, ptm, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`)
		if body := readFrame(t, out); !strings.Contains(body, `"id":7`) || !strings.Contains(body, `"capabilities"`) {
			t.Errorf("initialize answered %s", body)
		}
		writeFrame(t, ptm, `{"jsonrpc":"2.0","id":8,"method":"shutdown"}`)
		readFrame(t, out)
		writeFrame(t, ptm, `{"jsonrpc":"2.0","method":"exit"}`)
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve after exit: %v", err)
		}
	})
}

func writeFrame(t *testing.T, w io.Writer, body string) {
	t.Helper()
	if _, err := fmt.Fprintf(w, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		t.Fatal(err)
	}
}

func readFrame(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading a header: %v", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			if length, err = strconv.Atoi(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if length < 0 {
		t.Fatal("a frame without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatal(err)
	}
	return string(body)
}
