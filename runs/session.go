package runs

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/store"
)

// Kind is what a session runs: one story's worker, or an epic's runner.
type Kind string

const (
	KindStory Kind = "story"
	KindEpic  Kind = "epic"
)

// Session name prefixes: saga-story-<story>-<unixMillis>,
// saga-epic-<epic>-<unixMillis>.
const (
	StorySessionPrefix = "saga-story-"
	EpicSessionPrefix  = "saga-epic-"
)

// File names in the session dir.
const (
	outputSuffix = ".log"
	// EventsSuffix follows the output file's name in the events file's.
	EventsSuffix = ".events.jsonl"
)

func prefixOf(k Kind) string {
	if k == KindEpic {
		return EpicSessionPrefix
	}
	return StorySessionPrefix
}

// KindSessionName is the tmux session of a worker or runner started at t.
func KindSessionName(k Kind, id string, t time.Time) string {
	return prefixOf(k) + id + "-" + strconv.FormatInt(t.UnixMilli(), 10)
}

// ParseSessionName splits saga-story-<story>-<unixMillis>.
func ParseSessionName(name string) (story string, millis int64, ok bool) {
	k, id, ms, ok := ParseSession(name)
	if !ok || k != KindStory {
		return "", 0, false
	}
	return id, ms, true
}

// ParseSession splits a story or epic session name. Names never end in a
// dash, so the last dash separates the timestamp unambiguously.
func ParseSession(name string) (k Kind, id string, millis int64, ok bool) {
	rest, isStory := strings.CutPrefix(name, StorySessionPrefix)
	k = KindStory
	if !isStory {
		var isEpic bool
		if rest, isEpic = strings.CutPrefix(name, EpicSessionPrefix); !isEpic {
			return "", "", 0, false
		}
		k = KindEpic
	}
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 || i == len(rest)-1 {
		return "", "", 0, false
	}
	digits := rest[i+1:]
	if strings.Trim(digits, "0123456789") != "" {
		return "", "", 0, false
	}
	ms, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return "", "", 0, false
	}
	id = rest[:i]
	if (k == KindStory && !store.ValidCanonical(id)) || (k == KindEpic && !store.ValidID(id)) {
		return "", "", 0, false
	}
	return k, id, ms, true
}

// OutputFile is the human log of a session.
func OutputFile(sessionDir, session string) string {
	return filepath.Join(sessionDir, session+outputSuffix)
}

// ChecksFile is where a worker keeps the checks that count for its story's
// tasks (ChecksManifest) for the session: in the session dir,
// which the agent's sandbox cannot write.
func ChecksFile(sessionDir, session string) string {
	return filepath.Join(sessionDir, session+".checks.json")
}

// EventsFile is the events file written next to outputFile.
func EventsFile(outputFile string) string { return outputFile + EventsSuffix }

// OutputOfEvents is EventsFile's inverse.
func OutputOfEvents(eventsFile string) string { return strings.TrimSuffix(eventsFile, EventsSuffix) }

// RunFiles are every file a run keeps in the session dir, given its events
// file, in the order to remove them: the events file, which tells whose
// the others are, last.
func RunFiles(eventsFile string) []string {
	out := OutputOfEvents(eventsFile)
	session := strings.TrimSuffix(filepath.Base(out), outputSuffix)
	return []string{out, ChecksFile(filepath.Dir(out), session), eventsFile}
}

// IsEventsFile tells whether a session dir entry's name is an events file.
func IsEventsFile(name string) bool { return strings.HasSuffix(name, outputSuffix+EventsSuffix) }

// SessionOfEvents returns the session whose events file is path.
func SessionOfEvents(path string) (string, bool) {
	return strings.CutSuffix(filepath.Base(path), outputSuffix+EventsSuffix)
}

// RunFile is one events file of the session dir.
type RunFile struct {
	Kind       Kind
	ID         string // the story or epic
	Session    string
	Millis     int64 // from the session name: runs of one id are ordered by it
	EventsFile string
}

// ListRuns finds the events files of kind k in the session dir (and in
// the legacy one beside it: readDirs), by story or epic, oldest first. A
// missing dir, or one CheckSessionDir refuses, has none.
func ListRuns(dir string, k Kind) map[string][]RunFile {
	out := map[string][]RunFile{}
	for _, d := range readDirs(dir) {
		des, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, de := range des {
			if de.IsDir() {
				continue
			}
			rf, ok := runFileOf(d, de.Name())
			if ok && rf.Kind == k {
				out[rf.ID] = append(out[rf.ID], rf)
			}
		}
	}
	for _, rs := range out {
		sortRuns(rs)
	}
	return out
}

// Runs lists the events files of one story or epic, oldest first (from
// readDirs, as ListRuns).
func Runs(dir string, k Kind, id string) []RunFile {
	var rs []RunFile
	for _, d := range readDirs(dir) {
		matches, _ := filepath.Glob(filepath.Join(d, prefixOf(k)+id+"-*"+outputSuffix+EventsSuffix))
		for _, m := range matches {
			if rf, ok := runFileOf(d, filepath.Base(m)); ok && rf.Kind == k && rf.ID == id {
				rs = append(rs, rf)
			}
		}
	}
	sortRuns(rs)
	return rs
}

func runFileOf(dir, name string) (RunFile, bool) {
	session, ok := strings.CutSuffix(name, outputSuffix+EventsSuffix)
	if !ok {
		return RunFile{}, false
	}
	k, id, ms, ok := ParseSession(session)
	if !ok {
		return RunFile{}, false
	}
	return RunFile{Kind: k, ID: id, Session: session, Millis: ms, EventsFile: filepath.Join(dir, name)}, true
}

func sortRuns(rs []RunFile) {
	slices.SortFunc(rs, func(a, b RunFile) int {
		return cmp.Or(cmp.Compare(a.Millis, b.Millis), strings.Compare(a.Session, b.Session))
	})
}

// Latest folds the newest events file of a story or epic; nil when there is
// none.
func Latest(dir string, k Kind, id string) *Run {
	rs := Runs(dir, k, id)
	if len(rs) == 0 {
		return nil
	}
	return ReadRun(rs[len(rs)-1].EventsFile)
}

// RunOf finds the run of worker pid among the newest few events files of a
// story, else the newest run.
func RunOf(dir, story string, pid int) *Run {
	rs := Runs(dir, KindStory, story)
	var newest *Run
	for i := len(rs) - 1; i >= 0 && i >= len(rs)-5; i-- {
		r := ReadRun(rs[i].EventsFile)
		if r == nil {
			continue
		}
		if newest == nil {
			newest = r
		}
		if pid > 0 && r.PID == pid {
			return r
		}
	}
	return newest
}

// CheckShare is where two registrations of the TaskCompleted hook for one
// completion (the worker's --settings and an installed one) share its
// check result: <session dir>/checks/<claude session>--<story>--<task>,
// with ".lock" (the one running the checks holds its flock) and ".json"
// (the result). claudeSession and task hold no "--".
func CheckShare(sessionDir, claudeSession, story, task string) string {
	return filepath.Join(sessionDir, "checks", claudeSession+"--"+story+"--"+task)
}

// CheckSharesOf are the story's CheckShare bases in the session dir (and
// the legacy one: readDirs).
func CheckSharesOf(sessionDir, story string) []string {
	var out []string
	for _, d := range readDirs(sessionDir) {
		locks, _ := filepath.Glob(filepath.Join(d, "checks", "*--"+story+"--*.lock"))
		for _, l := range locks {
			base := strings.TrimSuffix(filepath.Base(l), ".lock")
			first, last := strings.Index(base, "--"), strings.LastIndex(base, "--")
			if first >= 0 && last > first && base[first+2:last] == story {
				out = append(out, strings.TrimSuffix(l, ".lock"))
			}
		}
	}
	return out
}
