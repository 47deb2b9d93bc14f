package workload

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/saga-ai/saga-lsp/store"
)

// The workloads of "nothing quadratic" (docs/architecture.md#budgets): one story of
// BigStoryTasks tasks whose dependencies form a random DAG, and one story of
// CycleTasks tasks on a single dependency cycle.
const (
	BigStoryTasks = 100_000
	BigStoryID    = "big"
	CycleTasks    = 10_000
	CycleStoryID  = "ring"
)

// EnsureBigStory makes dir hold story BigStoryID: tasks task-0 … task-N,
// each blocked by up to 3 earlier ones drawn at random; the first 30% are
// completed (their blockers are earlier, so completed too), the rest pending.
func EnsureBigStory(dir string, tasks int, seed int64) (string, error) {
	marker := fmt.Sprintf("saga-lsp workload v%d: story %s of %d tasks, random DAG, seed %d\n", Version, BigStoryID, tasks, seed)
	return ensureWith(dir, marker, func(dir string) error {
		rng := rand.New(rand.NewPCG(uint64(seed), 2))
		files := []file{storyFile(BigStoryID, "A story of many tasks")}
		for i := range tasks {
			var by []string
			for range rng.IntN(4) {
				if i == 0 {
					break
				}
				if b := fmt.Sprintf("task-%d", rng.IntN(i)); !slices.Contains(by, b) {
					by = append(by, b)
				}
			}
			status := store.StatusPending
			if i < tasks*3/10 {
				status = store.StatusCompleted
			}
			f, err := taskFile(BigStoryID, fmt.Sprintf("task-%d", i), status, by)
			if err != nil {
				return err
			}
			files = append(files, f)
		}
		return write(dir, files)
	})
}

// EnsureCycle makes dir hold story CycleStoryID: tasks c-0 … c-N, each
// blocked by the next, the last by the first — one cycle through all.
func EnsureCycle(dir string, tasks int) (string, error) {
	marker := fmt.Sprintf("saga-lsp workload v%d: story %s of %d tasks on one cycle\n", Version, CycleStoryID, tasks)
	return ensureWith(dir, marker, func(dir string) error {
		files := []file{storyFile(CycleStoryID, "A story that can never start")}
		for i := range tasks {
			f, err := taskFile(CycleStoryID, fmt.Sprintf("c-%d", i), store.StatusPending, []string{fmt.Sprintf("c-%d", (i+1)%tasks)})
			if err != nil {
				return err
			}
			files = append(files, f)
		}
		return write(dir, files)
	})
}

func storyFile(id, title string) file {
	data, _ := store.MarshalIndent(store.StoryDoc{ID: id, Title: title, Description: ""})
	return file{store.StoryFileRel(id), data}
}

func taskFile(story, id, status string, blockedBy []string) (file, error) {
	if blockedBy == nil {
		blockedBy = []string{}
	}
	data, err := store.MarshalIndent(store.TaskDoc{ID: id, Subject: "Do " + id, Description: "", Status: status, BlockedBy: blockedBy})
	if err != nil {
		return file{}, fmt.Errorf("workload: %s: %w", id, err)
	}
	return file{store.TaskFileRel(story, id), data}, nil
}
