package termtext_test

import (
	"testing"
	"unicode/utf8"

	"github.com/saga-ai/saga-lsp/internal/termtext"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain text — ünïcode ✓":              "plain text — ünïcode ✓",
		`C:\path\kept`:                        `C:\path\kept`,
		"title\x1b]0;pwned\x07":               `title\x1b]0;pwned\x07`,
		"clear\x1b[2J\x1b[H":                  `clear\x1b[2J\x1b[H`,
		"line\r\nnext\tcol":                   `line\r\nnext\tcol`,
		"nul\x00del\x7f":                      `nul\x00del\x7f`,
		"c1 csi \u009b31m":                    `c1 csi \u009b31m`,
		"raw \x9b byte and \xff":              `raw \x9b byte and \xff`,
		"bidi \u202eevil\u202c \u2066x\u2069": `bidi \u202eevil\u202c \u2066x\u2069`,
		"":                                    "",
	} {
		if got := termtext.Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// Whatever goes in, nothing a terminal acts on comes out.
func FuzzEscape(f *testing.F) {
	f.Add("a\x1b[31mb\u009b\xff\u202e\n")
	f.Fuzz(func(t *testing.T, s string) {
		out := termtext.Escape(s)
		for i, r := range out {
			if r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				t.Fatalf("Escape(%q) = %q: %U at %d", s, out, r, i)
			}
		}
		if !utf8.ValidString(out) {
			t.Fatalf("Escape(%q) = %q: invalid UTF-8 kept", s, out)
		}
	})
}

// Block keeps a message's lines as lines, each escaped and indented after
// the first: no line of it can pass for a line of its own or carry a
// control character.
func TestBlock(t *testing.T) {
	got := termtext.Block("check failed\nout\x1b]0;title\x07\r\nok  \texample.com/shop\t(cached)\nlast\r\n", "  ")
	want := "check failed\n  out\\x1b]0;title\\x07\n  ok  \texample.com/shop\t(cached)\n  last"
	if got != want {
		t.Errorf("Block = %q, want %q", got, want)
	}
}

// Lines keeps what a person reads as layout (newlines, tabs) and escapes
// the rest as Escape does.
func TestLines(t *testing.T) {
	for in, want := range map[string]string{
		"ok  \texample.com/shop/cart\t(cached)\nFAIL\tx\n": "ok  \texample.com/shop/cart\t(cached)\nFAIL\tx\n",
		"a\r\nb":                   "a\nb",
		"over\rwrite":              `over\rwrite`,
		"\x1b[2J\tbidi \u202e\xff": `\x1b[2J` + "\t" + `bidi \u202e\xff`,
	} {
		if got := termtext.Lines(in); got != want {
			t.Errorf("Lines(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 stories"}, {1, "1 story"}, {2, "2 stories"}} {
		if got := termtext.Count(c.n, "story", "stories"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
