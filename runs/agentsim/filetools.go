// The file tools: Read, Write and Edit.

package agentsim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// fileStateNote ends what the model sees after a Write or Edit.
const fileStateNote = " (file state is current in your context — no need to Read it back)"

func (s *session) readTool(in *obj) toolResult {
	p := s.abs(in.str("file_path"))
	data, err := os.ReadFile(p)
	if err != nil {
		return errResult(err.Error())
	}
	// As 2.1.330 numbers them: "1\ta", a final newline starts a last, empty line.
	content := string(data)
	lines := strings.Split(content, "\n")
	if content == "" {
		lines = nil
	}
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%d\t%s\n", i+1, l)
	}
	s.readFiles[p] = true
	return toolResult{
		structured: newObj("type", "text", "file", newObj("filePath", p, "content", content,
			"numLines", len(lines), "startLine", 1, "totalLines", len(lines))),
		text: strings.TrimSuffix(b.String(), "\n"),
	}
}

func (s *session) writeTool(in *obj) toolResult {
	p := s.abs(in.str("file_path"))
	content := in.str("content")
	old, err := os.ReadFile(p)
	existed := err == nil
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return errResult(err.Error())
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		return errResult(err.Error())
	}
	s.readFiles[p] = true
	if !existed {
		return toolResult{
			structured: newObj("type", "create", "filePath", p, "content", content, "structuredPatch", []any{}, "originalFile", nil,
				"userModified", false),
			text: "File created successfully at: " + p + fileStateNote,
		}
	}
	return toolResult{
		structured: newObj("type", "update", "filePath", p, "content", content,
			"structuredPatch", patch(string(old), content), "originalFile", string(old), "userModified", false),
		text: "The file " + p + " has been updated successfully." + fileStateNote,
	}
}

func (s *session) editTool(in *obj) toolResult {
	p := s.abs(in.str("file_path"))
	oldS, newS := in.str("old_string"), in.str("new_string")
	replaceAll, _ := in.get("replace_all")
	data, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errResult(err.Error())
	}
	orig := string(data)
	var updated string
	switch {
	case oldS == "":
		updated = newS
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return errResult(err.Error())
		}
	case replaceAll == true:
		updated = strings.ReplaceAll(orig, oldS, newS)
	default:
		updated = strings.Replace(orig, oldS, newS, 1)
	}
	if err := os.WriteFile(p, []byte(updated), 0o644); err != nil {
		return errResult(err.Error())
	}
	s.readFiles[p] = true
	return toolResult{
		structured: newObj("filePath", p, "oldString", oldS, "newString", newS, "originalFile", orig,
			"structuredPatch", patch(orig, updated), "userModified", false, "replaceAll", replaceAll == true),
		text: "The file " + p + " has been updated successfully." + fileStateNote,
	}
}

// patch is a one-hunk unified diff of two texts (common leading and
// trailing lines trimmed to three lines of context).
func patch(a, b string) []any {
	al, bl := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	if pre == len(al) && pre == len(bl) {
		return []any{}
	}
	ctxPre, ctxSuf := min(pre, 3), min(suf, 3)
	start := pre - ctxPre
	var lines []string
	for _, l := range al[start:pre] {
		lines = append(lines, " "+l)
	}
	for _, l := range al[pre : len(al)-suf] {
		lines = append(lines, "-"+l)
	}
	for _, l := range bl[pre : len(bl)-suf] {
		lines = append(lines, "+"+l)
	}
	for _, l := range al[len(al)-suf : len(al)-suf+ctxSuf] {
		lines = append(lines, " "+l)
	}
	oldLines := len(al) - suf + ctxSuf - start
	newLines := len(bl) - suf + ctxSuf - start
	return []any{newObj("oldStart", start+1, "oldLines", oldLines, "newStart", start+1, "newLines", newLines, "lines", lines)}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
