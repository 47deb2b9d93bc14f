package dashboard

import (
	"strings"
	"testing"
)

// TestRenderMarkdown: the journal's constructs become their tags; anything
// else — raw HTML, a javascript: link, control characters — is text.
func TestRenderMarkdown(t *testing.T) {
	src := "# Journal\n\n## 2026-11-20 blocker\nNeeds **a** _b_ ~~c~~ `d<e>` [site](https://example.com/x?a=1&b=2) [evil](javascript:alert(1))\n\n" +
		"- one\n- two <i>x</i>\n\n1. first\n2. second\n\n> quoted *it*\n\n```\n<script>alert(1)</script>\n```\n\n---\n\n<img src=x onerror=alert(1)>\ntext\x1b[31m\n"
	got := string(renderMarkdown(src))
	for _, want := range []string{
		"<h3>Journal</h3>",
		`<h3 class="blocker">2026-11-20 blocker</h3>`,
		"<strong>a</strong> <em>b</em> <del>c</del> <code>d&lt;e&gt;</code>",
		`<a href="https://example.com/x?a=1&amp;b=2" rel="noreferrer noopener">site</a>`,
		"[evil](javascript:alert(1))",
		"<ul>\n<li>one</li>\n<li>two &lt;i&gt;x&lt;/i&gt;</li>\n</ul>",
		"<ol>\n<li>first</li>\n<li>second</li>\n</ol>",
		"<blockquote>\n<p>quoted <em>it</em></p>\n</blockquote>",
		"<pre><code>&lt;script&gt;alert(1)&lt;/script&gt;\n</code></pre>",
		"<hr>",
		`<p class="pre">&lt;img src=x onerror=alert(1)&gt;` + "\ntext\\x1b[31m\n</p>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	for _, bad := range []string{"<script", "<img", "<i>", "javascript:alert(1)\"", "\x1b"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q passed through:\n%s", bad, got)
		}
	}
}
