package worker_test

import (
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/worker"
)

// $SAGA_WORKER_NICE: unset is the default; a value out of 0–19 is refused
// with the default and says so (docs/worker.md#priority).
func TestNiceOf(t *testing.T) {
	for v, want := range map[string]int{"": worker.Nice, "0": 0, " 7 ": 7, "19": 19, "20": worker.Nice, "-1": worker.Nice, "low": worker.Nice} {
		got, err := worker.NiceOf(func(k string) string { return map[string]string{runs.EnvWorkerNice: v}[k] })
		refused := v == "20" || v == "-1" || v == "low"
		if got != want || (err != nil) != refused {
			t.Errorf("%q: %d, %v; want %d", v, got, err, want)
		}
		if refused && !strings.Contains(err.Error(), runs.EnvWorkerNice+"=") {
			t.Errorf("%q: the error does not name the variable: %v", v, err)
		}
	}
}
