package store

import (
	"strings"
	"testing"
)

// TestCheckNameLength: 200 bytes is the longest name created; the message
// says how long the name is and what the limit is.
func TestCheckNameLength(t *testing.T) {
	if err := CheckNameLength("task id", strings.Repeat("a", MaxNameBytes)); err != nil {
		t.Fatalf("%d bytes refused: %v", MaxNameBytes, err)
	}
	err := CheckNameLength("task id", strings.Repeat("a", 300))
	if err == nil || !strings.Contains(err.Error(), "task id \"aaaa") || !strings.Contains(err.Error(), "is 300 bytes long; names are at most 200 bytes") {
		t.Fatalf("300 bytes: %v", err)
	}
	// Bytes, not characters: 101 two-byte letters are 202 bytes.
	if err := CheckNameLength("story name", strings.Repeat("é", 101)); err == nil {
		t.Fatal("202 bytes accepted")
	}
}
