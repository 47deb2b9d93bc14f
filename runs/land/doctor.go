package land

import (
	"context"
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/doctor"
)

// MethodCheck is doctor's line on how land merges in the repository at
// root: the merge queue of its default branch, or the method land chooses
// (Method), asked of GitHub through gh for the repository gh infers from
// origin (gh fills in {owner} and {repo}). Offline, or without gh, it is
// not checked.
func MethodCheck(ctx context.Context, root string, env func(string) string) doctor.Check {
	const name = "land method"
	gh, err := runs.LookProgram(env, runs.ProgramGH)
	if err != nil {
		return doctor.Check{Name: name, Level: doctor.Unchecked, Detail: "not checked: gh is not installed"}
	}
	rp, _, err := Read(ctx, gh, root, "{owner}", "{repo}", nil)
	if err != nil {
		return doctor.Check{Name: name, Level: doctor.Unchecked, Detail: "not checked: " + err.Error(), Fix: "`saga-lsp land <epic> --dry-run` says it too, when GitHub can be reached"}
	}
	m, err := Method(rp, "")
	switch {
	case err != nil:
		return doctor.Check{Name: name, Level: doctor.Warning, Detail: err.Error() + ": land cannot merge", Fix: "allow a merge method in the repository's settings"}
	case m == "queue":
		return doctor.Check{Name: name, Level: doctor.OK, Detail: fmt.Sprintf("the merge queue of %s: land enqueues each ready story", rp.Default)}
	}
	return doctor.Check{Name: name, Level: doctor.OK, Detail: fmt.Sprintf("%s into %s (the repository allows: %s; land --method chooses)", m, rp.Default, strings.Join(rp.Methods, ", "))}
}
