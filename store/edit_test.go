package store_test

import (
	"testing"

	"github.com/saga-ai/saga-lsp/store"
)

// TestSetStoryString: a story's status is kept up to date where the file
// has one and never added (upstream's strict story schema has none); other
// fields are set or appended as SetString does.
func TestSetStoryString(t *testing.T) {
	tests := []struct{ name, src, key, value, want string }{
		{"status kept up to date", "{\n  \"id\": \"s\",\n  \"status\": \"pending\"\n}\n", "status", "completed",
			"{\n  \"id\": \"s\",\n  \"status\": \"completed\"\n}\n"},
		{"status never added", "{\n  \"id\": \"s\"\n}\n", "status", "in_progress", "{\n  \"id\": \"s\"\n}\n"},
		{"branch appended", "{\n  \"id\": \"s\"\n}\n", "branch", "story/s", "{\n  \"id\": \"s\",\n  \"branch\": \"story/s\"\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.SetStoryString([]byte(tt.src), tt.key, tt.value)
			if err != nil || string(got) != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
