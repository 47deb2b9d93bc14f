package workload

import (
	"fmt"
	"strings"
)

// The long-list workspace of issue 17: one task file whose blockedBy holds
// tens of thousands of entries (60,000 make about 600 KB), the hostile shape
// every request must answer without a cost quadratic in the list's length.
const (
	LongStory     = "long"
	LongTask      = "huge"
	LongSiblings  = 100 // the story's other tasks: k-000 … k-099
	LongTaskRel   = ".saga/stories/" + LongStory + "/" + LongTask + ".json"
	longStoryJSON = `{"id": "long", "title": "Long lists", "description": "Issue 17's hostile file.", "status": "pending"}` + "\n"
)

// LongLayout is how the long list is laid out in its file.
type LongLayout int

const (
	LongLines   LongLayout = iota // one blockedBy entry per line
	LongOneLine                   // the whole list on one line (a minified file)
	LongKeys                      // not a list: an object with that many unknown properties
)

// LongEntry is the i-th blockedBy entry of the long list: even entries name
// tasks that do not exist (u-00000, u-00002, …: an unknown-dependency each),
// odd ones the sibling k-(i mod 100), repeating (each repeat a uniqueItems
// schema finding).
func LongEntry(i int) string {
	if i%2 == 0 {
		return fmt.Sprintf("u-%05d", i)
	}
	return LongSibling(i % LongSiblings)
}

// LongSibling names the story's j-th other task.
func LongSibling(j int) string { return fmt.Sprintf("k-%03d", j) }

// LongList writes the story under dir/.saga and returns the long task
// file's text; entries must be even and at least 2×LongSiblings.
func LongList(dir string, entries int, layout LongLayout) (string, error) {
	if entries%2 != 0 || entries < 2*LongSiblings {
		return "", fmt.Errorf("workload: %d entries: want an even number of at least %d", entries, 2*LongSiblings)
	}
	files := []file{{rel: ".saga/stories/" + LongStory + "/story.json", data: []byte(longStoryJSON)}}
	for j := range LongSiblings {
		id := LongSibling(j)
		files = append(files, file{rel: ".saga/stories/" + LongStory + "/" + id + ".json", data: fmt.Appendf(nil,
			`{"id": %q, "subject": "Sibling %d", "description": "", "status": "pending", "blockedBy": []}`+"\n", id, j)})
	}
	var b strings.Builder
	b.WriteString("{\n  \"id\": \"" + LongTask + "\",\n  \"subject\": \"Blocked by everything\",\n  \"description\": \"\",\n  \"status\": \"pending\",\n")
	switch layout {
	case LongKeys:
		b.WriteString("  \"blockedBy\": [],\n")
		for i := range entries {
			sep := ",\n"
			if i == entries-1 {
				sep = "\n"
			}
			fmt.Fprintf(&b, "  \"x-%05d\": %d%s", i, i, sep)
		}
	default:
		sep, open, close := ",\n    ", "[\n    ", "\n  ]\n"
		if layout == LongOneLine {
			sep, open, close = ",", "[", "]\n"
		}
		b.WriteString("  \"blockedBy\": " + open)
		for i := range entries {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(`"` + LongEntry(i) + `"`)
		}
		b.WriteString(close)
	}
	b.WriteString("}\n")
	files = append(files, file{rel: LongTaskRel, data: []byte(b.String())})
	return b.String(), write(dir, files)
}
