package claudecode

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSanitize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"write-tests", "write-tests"},
		{"A_Z-09_az", "A_Z-09_az"},
		{"saga__user-auth--setup-db__1700000000000", "saga__user-auth--setup-db__1700000000000"},
		{"a.b", "a-b"},
		{"../etc/passwd", "---etc-passwd"},
		{"a b\tc\n", "a-b-c-"},
		{"é", "-"},         // one UTF-16 code unit
		{"日本", "--"},       // two BMP characters
		{"a😀b", "a--b"},    // a surrogate pair: two code units
		{"\xff\xfe", "--"}, // bytes that are not UTF-8: one each
		{"C:\\x", "C--x"},
		{"550e8400-e29b-41d4-a716-446655440000", "550e8400-e29b-41d4-a716-446655440000"},
	}
	for _, tc := range tests {
		if got := Sanitize(tc.in); got != tc.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Sanitize(Sanitize(tc.in)); got != tc.want {
			t.Errorf("Sanitize is not idempotent on %q: %q", tc.in, got)
		}
	}
}

func TestListDir(t *testing.T) {
	tests := []struct{ cfg, list, want string }{
		{"/home/u/.claude", "saga__s__1", "/home/u/.claude/tasks/saga__s__1"},
		{"/cfg", "../../etc", "/cfg/tasks/------etc"},
		{"/cfg", "a/b", "/cfg/tasks/a-b"},
		{"/cfg/", "x", "/cfg/tasks/x"},
	}
	for _, tc := range tests {
		if got := ListDir(tc.cfg, tc.list); got != filepath.FromSlash(tc.want) {
			t.Errorf("ListDir(%q, %q) = %q, want %q", tc.cfg, tc.list, got, tc.want)
		}
	}
}

func TestListIDRoundTrip(t *testing.T) {
	tests := []struct {
		story string
		ms    int64
		want  string
	}{
		{"a", 0, "saga__a__0"},
		{"add-logout-button", 1700000000000, "saga__add-logout-button__1700000000000"},
		{"user-auth--setup-db", 1, "saga__user-auth--setup-db__1"},
		{"e--s--t", 9223372036854775807, "saga__e--s--t__9223372036854775807"},
		{"0", 42, "saga__0__42"},
	}
	for _, tc := range tests {
		id := ListID(tc.story, tc.ms)
		if id != tc.want {
			t.Errorf("ListID(%q, %d) = %q, want %q", tc.story, tc.ms, id, tc.want)
		}
		if Sanitize(id) != id {
			t.Errorf("ListID(%q) = %q changes when sanitised", tc.story, id)
		}
		if story, ok := StoryOfList(id); !ok || story != tc.story {
			t.Errorf("StoryOfList(%q) = %q, %v; want %q, true", id, story, ok, tc.story)
		}
	}
}

func TestStoryOfListRejects(t *testing.T) {
	for _, id := range []string{
		"",
		"saga__",
		"saga__a",
		"saga__a__",
		"saga____1",
		"saga__a__12x",
		"saga__a__-1",
		"saga__a__+1",
		"saga__a__ 1",
		"saga__a__99999999999999999999",
		"saga__A__1",
		"saga__a_b__1",
		"saga__a__b__1", // story "a__b" is not a canonical name
		"saga__a---b__1",
		"saga__-a__1",
		"saga__a.b__1",
		"saga__a😀__1",
		"Saga__a__1",
		"x__a__1",
		"saga_a__1",
		"9f4c2b1e-3d2a-4c1b-8e7f-0a1b2c3d4e5f",
	} {
		if story, ok := StoryOfList(id); ok {
			t.Errorf("StoryOfList(%q) = %q, true; want false", id, story)
		}
	}
}

func TestConfigDir(t *testing.T) {
	wd, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, env, home, want string
		wantErr               bool
	}{
		{"env wins", "/opt/claude", "/home/u", "/opt/claude", false},
		{"env cleaned", "/opt/claude/", "/home/u", "/opt/claude", false},
		{"relative env made absolute", "rel/cfg", "/home/u", filepath.Join(wd, "rel/cfg"), false},
		{"empty env means unset", "", "/home/u", "/home/u/.claude", false},
		{"no env, no home", "", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{EnvConfigDir: tc.env, "HOME": tc.home}
			got, err := ConfigDir(func(k string) string { return env[k] })
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "HOME") {
					t.Errorf("ConfigDir() = %q, %v; want an error naming HOME", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ConfigDir() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// One task-list-id rule for every reader (the hook's sync and the worker
// agree): a list id needs its __<unixMillis>; the bare saga__<story> of an
// early design is not a SAGA list.
func TestStoryOfListCases(t *testing.T) {
	for in, want := range map[string]string{
		"saga__my-story__1735689600000":      "my-story",
		"saga__user-auth--setup-db__1700000": "user-auth--setup-db",
		"saga__my-story":                     "",
		"saga__my-story__":                   "",
		"saga__my-story__12a":                "",
		"saga__My-Story__1":                  "",
		"saga____1":                          "",
		"saga__a__b__1":                      "",
		"my-story":                           "",
		"":                                   "",
		"SAGA__x__1":                         "",
	} {
		got, ok := StoryOfList(in)
		if got != want || ok != (want != "") {
			t.Errorf("StoryOfList(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
