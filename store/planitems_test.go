package store_test

import (
	"bytes"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/store"
)

// TestBroken: which task files plan and status must not present as tasks.
func TestBroken(t *testing.T) {
	p := workspace.Parser(t)
	valid := `{"id": "t", "subject": "s", "description": "", "status": "pending", "blockedBy": []}`
	tests := []struct {
		name string
		src  []byte
		code store.Code // "" when not broken
	}{
		{"valid", []byte(valid), ""},
		{"empty", nil, store.CodeJSONSyntax},
		{"unparsable", []byte(`{"id": "t" "subject": "s"}`), store.CodeJSONSyntax},
		{"schema-invalid", bytes.Replace([]byte(valid), []byte(`"pending"`), []byte(`"done"`), 1), store.CodeSchema},
		{"over-size", append([]byte(valid), bytes.Repeat([]byte(" "), filesafe.MaxFileSize)...), store.CodeUnreadableFile},
		{"binary", []byte("{\x00}"), store.CodeUnreadableFile},
		// A name problem is a finding, but the content is still a task.
		{"id mismatch", bytes.Replace([]byte(valid), []byte(`"id": "t"`), []byte(`"id": "u"`), 1), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, broken := p.Parse(".saga/stories/s/t.json", tt.src, -1).Broken()
			if broken != (tt.code != "") || d.Code != tt.code {
				t.Errorf("Broken() = %v %q, want %q", broken, d.Code, tt.code)
			}
		})
	}
}
