package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Poll asks GitHub, through gh in dir, for the reviews of every pull
// request in prs in one GraphQL query (pollQuery): a watcher's poll
// (docs/review.md#watching). Each answer is what Read would answer for
// the pull request. A pull request GitHub cannot resolve is left out of
// the map and named in the error, the others answered; a poll GitHub did
// not answer at all is an error and no map.
func Poll(ctx context.Context, gh, dir string, prs []Repo) (map[Repo]*PR, error) {
	var uniq []Repo
	for _, r := range prs {
		if !slices.Contains(uniq, r) {
			uniq = append(uniq, r)
		}
	}
	if len(uniq) == 0 {
		return map[Repo]*PR{}, nil
	}
	args := []string{"graphql", "-f", "query=" + pollQuery(len(uniq))}
	for i, r := range uniq {
		n := strconv.Itoa(i)
		args = append(args, "-F", "o"+n+"="+r.Owner, "-F", "n"+n+"="+r.Name, "-F", "p"+n+"="+strconv.Itoa(r.Number))
	}
	out, err := ghAPI(ctx, gh, dir, args...)
	var w struct {
		Data   map[string]json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
			Path    []any  `json:"path"`
		} `json:"errors"`
	}
	// GitHub answers the pull requests it resolved and names the others
	// in errors; gh then exits 1 with the answer on stdout.
	if jerr := json.Unmarshal(out, &w); jerr != nil || w.Data == nil {
		if err == nil {
			err = fmt.Errorf("gh printed what is not GitHub's answer: %v", jerr)
		}
		if len(w.Errors) > 0 {
			err = fmt.Errorf("GitHub: %s", w.Errors[0].Message)
		}
		return nil, fmt.Errorf("poll the reviews of %d pull requests: %w", len(uniq), err)
	}
	got := map[Repo]*PR{}
	var errs []error
	for i, r := range uniq {
		alias := "pr" + strconv.Itoa(i)
		// The alias's repository, as Read's answer holds it: decoded alike.
		one, _ := json.Marshal(map[string]any{"data": map[string]json.RawMessage{"repository": w.Data[alias]}})
		pr, derr := decodePR(one)
		if derr != nil {
			for _, e := range w.Errors {
				if len(e.Path) > 0 && e.Path[0] == alias {
					derr = fmt.Errorf("GitHub: %s", e.Message)
				}
			}
			if len(w.Errors) == 1 && len(w.Errors[0].Path) == 0 {
				derr = fmt.Errorf("GitHub: %s", w.Errors[0].Message)
			}
			errs = append(errs, fmt.Errorf("read the review of %s/%s#%d: %w", r.Owner, r.Name, r.Number, derr))
			continue
		}
		got[r] = pr
	}
	return got, errors.Join(errs...)
}
