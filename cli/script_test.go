package cli_test

import (
	"encoding/json"
	"errors"
	"maps"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestScripts runs testdata/script/*.txtar: each archive holds a workspace
// and a script of saga-lsp commands with what they must print, in
// testscript's language plus two commands of ours:
//
//	saga CODE ARGS…        run the built saga-lsp with ARGS; its exit code must be CODE
//	strict story|epic FILE FILE holds only the fields upstream SAGA's strict schema accepts
func TestScripts(t *testing.T) {
	bin := testkit.Binary(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"saga":   func(ts *testscript.TestScript, neg bool, args []string) { cmdSaga(ts, bin, neg, args) },
			"strict": cmdStrict,
		},
	})
}

func cmdSaga(ts *testscript.TestScript, bin string, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: saga EXIT-CODE [args…]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("saga: exit code %q is not a number", args[0])
	}
	got := 0
	var exit *exec.ExitError
	if err := ts.Exec(bin, args[1:]...); errors.As(err, &exit) {
		got = exit.ExitCode()
	} else if err != nil {
		ts.Fatalf("saga-lsp %s: %v", strings.Join(args[1:], " "), err)
	}
	if got != want {
		ts.Fatalf("saga-lsp %s: exit %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// Upstream SAGA's strict story and epic objects (docs/format.md#two-dialects-both-first-class): only these
// fields, the first three (and an epic's children) required.
var upstreamFields = map[string][]string{
	"story": {"id", "title", "description", "epic", "guidance", "doneWhen", "avoid", "branch", "pr", "worktree"},
	"epic":  {"id", "title", "description", "children"},
}

func cmdStrict(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 || upstreamFields[args[0]] == nil {
		ts.Fatalf("usage: strict story|epic FILE")
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(ts.ReadFile(args[1])), &doc); err != nil {
		ts.Fatalf("%s: %v", args[1], err)
	}
	allowed := upstreamFields[args[0]]
	for _, k := range slices.Sorted(maps.Keys(doc)) {
		if !slices.Contains(allowed, k) {
			ts.Fatalf("%s: field %q is not in upstream's strict %s object", args[1], k, args[0])
		}
	}
	required := allowed[:3]
	if args[0] == "epic" {
		required = allowed
	}
	for _, k := range required {
		if _, ok := doc[k]; !ok {
			ts.Fatalf("%s: lacks the required %q", args[1], k)
		}
	}
}
