package store

import (
	"slices"
	"testing"
)

func TestJournal(t *testing.T) {
	journal := []byte(`# Journal: shop--a

## 2026-11-20T10:12:00Z decision
Prices are integers
in cents.

## 2026-11-20T10:20:00Z blocker
Which currency?

## 2026-11-20T10:30:00Z resolution
Euros only.

## 2026-11-20T10:40:00Z Decision

## 2026-11-20T10:41:00Z decision
Round half to even.
`)
	if got, want := JournalDecisions(journal), []string{"Prices are integers in cents.", "Round half to even."}; !slices.Equal(got, want) {
		t.Errorf("decisions %q, want %q", got, want)
	}
	if blocked, _, n := JournalBlocker(journal); blocked || n != 1 {
		t.Errorf("blocked %v with %d blockers; want resolved, 1", blocked, n)
	}
	if blocked, text, _ := JournalBlocker(journal[:len("# Journal: shop--a\n\n## 2026-11-20T10:12:00Z decision\nPrices are integers\nin cents.\n\n## 2026-11-20T10:20:00Z blocker\nWhich currency?\n")]); !blocked || text != "Which currency?" {
		t.Errorf("open blocker: %v %q", blocked, text)
	}
	if got := JournalDecisions(nil); got != nil {
		t.Errorf("no journal: %q", got)
	}
}
