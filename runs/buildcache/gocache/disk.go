package gocache

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The layout of a GOCACHE directory, as cmd/go/internal/cache writes it (Go
// 1.12 and later): <dir>/<xx>/<hex id>-a is an action's index entry,
//
//	v1 <action id hex> <output id hex> <size, %20d> <time in ns, %20d>\n
//
// and <dir>/<xx>/<hex output id>-d its output, the file whose SHA-256 is the
// output id; xx is the id's first byte in hex. Executables that `go run`
// caches are a directory <hex>-d holding one file: never served here (a
// miss), the go command builds them again.

const (
	hashSize  = sha256.Size
	hexSize   = 2 * hashSize
	entrySize = 2 + 1 + hexSize + 1 + hexSize + 1 + 20 + 1 + 20 + 1
)

// errExecutable is the miss of an executable `go run` cached (a directory
// output): not served, and no sign of corruption.
var errExecutable = errors.New("a cached executable")

// entry is an action's index entry.
type entry struct {
	output [hashSize]byte
	size   int64
	time   time.Time
}

// layer is one GOCACHE directory.
type layer struct {
	dir string
	// verify: outputs are hashed before they are served (the lower: a
	// corrupt or planted file is a miss, never a wrong build).
	verify bool
	// maxSize bounds an output served (a huge file is a miss).
	maxSize int64
	// root, the upper's only, is where puts write: a link the story's code
	// planted in its own cache (a shard folder, an entry, the counters'
	// file) never leads a write out of it (docs/security.md#warm-build-caches).
	root *os.Root
}

func (l layer) file(id []byte, key string) string {
	return filepath.Join(l.dir, rel(id, key))
}

// get is the action's entry and its output's path, or an error saying why
// it is a miss.
func (l layer) get(action []byte) (entry, string, error) {
	data, err := readRegular(l.file(action, "a"), entrySize)
	if err != nil {
		return entry{}, "", err
	}
	e, err := parseEntry(data, action)
	if err != nil {
		return entry{}, "", err
	}
	if e.size > l.maxSize {
		return entry{}, "", fmt.Errorf("output of %d bytes, over the limit of %d", e.size, l.maxSize)
	}
	out := l.file(e.output[:], "d")
	if err := l.check(out, e.output, e.size); err != nil {
		return entry{}, "", err
	}
	return e, out, nil
}

// check tells whether the file at p is a regular file of the given size
// (and, when the layer verifies, content).
func (l layer) check(p string, output [hashSize]byte, size int64) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return errExecutable
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s)", p, fi.Mode().Type())
	}
	if fi.Size() != size {
		return fmt.Errorf("%s has %d bytes, its entry says %d", p, fi.Size(), size)
	}
	if !l.verify {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) {
		return fmt.Errorf("%s changed while it was read", p)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, size+1)); err != nil {
		return err
	}
	if !bytes.Equal(h.Sum(nil), output[:]) {
		return fmt.Errorf("%s does not match its hash", p)
	}
	return nil
}

// parseEntry reads an index entry as cmd/go does, strictly.
func parseEntry(data, action []byte) (entry, error) {
	if len(data) != entrySize || string(data[:3]) != "v1 " || data[3+hexSize] != ' ' || data[4+2*hexSize] != ' ' || data[5+2*hexSize+20] != ' ' || data[entrySize-1] != '\n' {
		return entry{}, errors.New("malformed index entry")
	}
	var e entry
	var id [hashSize]byte
	if _, err := hex.Decode(id[:], data[3:3+hexSize]); err != nil || !bytes.Equal(id[:], action) {
		return entry{}, errors.New("index entry of another action")
	}
	if _, err := hex.Decode(e.output[:], data[4+hexSize:4+2*hexSize]); err != nil {
		return entry{}, errors.New("malformed output id")
	}
	size, err1 := strconv.ParseInt(string(bytes.TrimLeft(data[5+2*hexSize:5+2*hexSize+20], " ")), 10, 64)
	ns, err2 := strconv.ParseInt(string(bytes.TrimLeft(data[6+2*hexSize+20:entrySize-1], " ")), 10, 64)
	if err1 != nil || err2 != nil || size < 0 || ns < 0 {
		return entry{}, errors.New("malformed size or time")
	}
	e.size, e.time = size, time.Unix(0, ns)
	return e, nil
}

// put stores an output and its action's entry; it returns the output's
// path.
func (l layer) put(action, output []byte, body []byte) (string, error) {
	var out [hashSize]byte
	copy(out[:], output)
	p := l.file(output, "d")
	if !sameContent(p, out) {
		if err := writeAtomic(l.root, rel(output, "d"), body); err != nil {
			return "", err
		}
	}
	line := fmt.Sprintf("v1 %x %x %20d %20d\n", action, output, len(body), time.Now().UnixNano())
	if err := writeAtomic(l.root, rel(action, "a"), []byte(line)); err != nil {
		return "", err
	}
	return p, nil
}

// rel is an id's file relative to its layer's folder.
func rel(id []byte, key string) string {
	return filepath.Join(hex.EncodeToString(id[:1]), hex.EncodeToString(id)+"-"+key)
}

// sameContent tells whether the file at p holds the output (an existing
// output is kept, as cmd/go keeps it, only when its content is right).
func sameContent(p string, output [hashSize]byte) bool {
	return layer{verify: true}.check(p, output, fileSize(p)) == nil
}

func fileSize(p string) int64 {
	fi, err := os.Lstat(p)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// readRegular reads a regular file of at most max bytes (a symlink, a
// device, a fifo or a longer file is an error).
func readRegular(p string, max int) ([]byte, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > int64(max) {
		return nil, fmt.Errorf("%s is not an index entry", p)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(max)+1))
}

// writeAtomic writes a cache file, name relative to root, through a temp
// file renamed into place, so that a reader (another go command of the
// story) never sees it half written; the rename replaces a link at name,
// never writes through it. Unlike filesafe.WriteFileAtomic it does not fsync:
// an entry a crash left torn is a miss (sizes and hashes are checked), and
// a sync per entry would cost a build hundreds of them.
func writeAtomic(root *os.Root, name string, data []byte) error {
	if err := root.MkdirAll(filepath.Dir(name), 0o777); err != nil {
		return err
	}
	tmp := name + ".tmp-" + rand.Text()
	if err := root.WriteFile(tmp, data, 0o666); err != nil {
		root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

// openUpper makes the upper folder if need be and opens it as the root of
// every write (a link at the upper itself is refused: the story's code
// could have put it there).
func openUpper(dir string) (*os.Root, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o777); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder (a link?): %v", dir, err)
	}
	return os.OpenRoot(dir)
}
