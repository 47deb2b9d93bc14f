package cli_test

import (
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// run --watch is refused without --review, with a pause under the floor,
// and --watch-every without --watch; nothing starts.
func TestRunWatchUsage(t *testing.T) {
	root := testkit.GitRepo(t, examples(t, "workspace"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--watch"}, "--watch goes with --review"},
		{[]string{"--review", "--watch", "--watch-every", "5s"}, "--watch-every must be at least 30s"},
		{[]string{"--review", "--watch-every", "2m"}, "--watch-every goes with --watch"},
		{[]string{"--review", "--watch", "--follow"}, "--follow does not go with --watch"},
		{[]string{"--review", "--watch", "--on", "github", "--model", "opus"}, "--model does not reach a GitHub Actions job"},
	} {
		r := run(t, root, append([]string{"run", "user-auth--api"}, c.args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s%s", c.args, r.Code, c.want, r.Stdout, r.Stderr)
		}
	}
}
