package gocache

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Main is `saga-lsp __gocacheprog --upper DIR [--lower DIR]`
// (buildcache.GoCacheProgCommand), which the go command starts as its
// GOCACHEPROG (buildcache.CacheEnv sets it).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("GOCACHEPROG", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	fs.StringVar(&o.Upper, "upper", "", "the story's GOCACHE `DIR`, written")
	fs.StringVar(&o.Lower, "lower", "", "a warm GOCACHE `DIR`, only read")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || o.Upper == "" {
		fmt.Fprintln(stderr, "usage: --upper DIR [--lower DIR] (the go command starts it as GOCACHEPROG)")
		return 2
	}
	if _, err := Serve(stdin, stdout, o); err != nil {
		fmt.Fprintf(stderr, "saga-lsp: %v\n", err)
		return 1
	}
	return 0
}

// appendStats adds a line to the upper's StatsFile (one small append: the
// lines of concurrent go commands do not mix). Best effort: the build does
// not depend on it. Opened in the upper's root: a link a story planted
// there to a file of the user's is not followed out.
func appendStats(upper *os.Root, st Stats) {
	line, _ := json.Marshal(st)
	f, err := upper.OpenFile(StatsFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return
	}
	defer f.Close()
	f.Write(append(line, '\n'))
}

// testExpire is when `go clean -testcache` last ran on the GOCACHE dir (the
// zero time when never): test results cached before it do not count.
func testExpire(dir string) time.Time {
	data, err := readRegular(filepath.Join(dir, "testexpire.txt"), 64)
	if err != nil {
		return time.Time{}
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || ns < 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// raiseTestExpire makes the upper's test cache expire no earlier than the
// lower's: a test result the user expired stays expired for the story (the
// go command reads the file from its GOCACHE, the upper, not from us).
func raiseTestExpire(upper *os.Root, t time.Time) {
	if t.IsZero() || !testExpire(upper.Name()).Before(t) {
		return
	}
	writeAtomic(upper, "testexpire.txt", []byte(strconv.FormatInt(t.UnixNano(), 10)+"\n"))
}
