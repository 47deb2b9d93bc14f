package testkit

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a test was stopped instead of
// stopping it.
type recorder struct {
	testing.TB
	calls []string
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.calls = append(r.calls, "fatal: "+fmt.Sprintf(format, args...))
}
func (r *recorder) Errorf(format string, args ...any) {
	r.calls = append(r.calls, "error: "+fmt.Sprintf(format, args...))
}
func (r *recorder) Skip(args ...any) { r.calls = append(r.calls, "skip: "+fmt.Sprint(args...)) }
func (r *recorder) Logf(format string, args ...any) {
	r.calls = append(r.calls, "log: "+fmt.Sprintf(format, args...))
}

// A missing prerequisite skips the test, or fails it under
// SAGA_TEST_NEED_ALL=1 (and only =1: CI=true is not it).
func TestNeeds(t *testing.T) {
	const tool = "saga-no-such-tool-anywhere"
	for _, c := range []struct {
		env, ci string
		want    string
	}{{"", "", "skip: "}, {"", "true", "skip: "}, {"1", "", "fatal: "}} {
		t.Run("need-all="+c.env+",ci="+c.ci, func(t *testing.T) {
			t.Setenv(NeedAllVar, c.env)
			t.Setenv("CI", c.ci)
			r := &recorder{TB: t}
			NeedsTool(r, tool, "apt-get install it")
			if len(r.calls) == 0 || !strings.HasPrefix(r.calls[0], c.want) || !strings.Contains(r.calls[0], tool+" is not installed (apt-get install it)") {
				t.Errorf("NeedsTool: %q, want %q… naming the tool", r.calls, c.want)
			}
			r = &recorder{TB: t}
			if HasTool(r, tool, "") || len(r.calls) != 1 || (c.env == "1") != strings.HasPrefix(r.calls[0], "error: ") {
				t.Errorf("HasTool: %q", r.calls)
			}
			r = &recorder{TB: t}
			if NeedsTool(r, "sh", "") == "" || HasTool(r, "sh", "") == false || len(r.calls) != 0 {
				t.Errorf("a tool that is there: %q", r.calls)
			}
		})
	}
}
