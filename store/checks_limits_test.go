package store

import (
	"testing"

	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// checkLimits: sizes in KiB, MiB or GiB, a whole number of processes; a
// member that is missing or invalid keeps its default.
func TestTaskCheckLimits(t *testing.T) {
	for _, c := range []struct {
		doc  string
		want CheckLimits
	}{
		{`{}`, CheckLimits{}},
		{`{"checkLimits": {"memory": "4GiB", "fileSize": "512MiB", "processes": 64}}`, CheckLimits{Memory: 4 << 30, FileSize: 512 << 20, Processes: 64}},
		{`{"checkLimits": {"memory": "100KiB", "processes": 1e2}}`, CheckLimits{Memory: 100 << 10, Processes: 100}},
		{`{"checkLimits": {"memory": "4GB", "fileSize": 1024, "processes": 0.5}}`, CheckLimits{}},
		{`{"checkLimits": {"memory": "0GiB", "fileSize": "01MiB", "processes": 65537}}`, CheckLimits{}},
		{`{"checkLimits": {"memory": "12345678GiB"}}`, CheckLimits{}},
		{`{"checkLimits": "2GiB"}`, CheckLimits{}},
	} {
		if got := TaskCheckLimits(jsonc.Parse([]byte(c.doc)).Root); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.doc, got, c.want)
		}
	}
	if d := (CheckLimits{}).WithDefaults(); d != (CheckLimits{Memory: 2 << 30, FileSize: 1 << 30, Processes: 512}) {
		t.Errorf("defaults %+v", d)
	}
	for n, want := range map[int64]string{2 << 30: "2GiB", 1536 << 20: "1536MiB", 3 << 10: "3KiB", 1000: "1000 bytes"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
