// Package gocache owns Go's build cache of a story's runs and checks: the
// GOCACHEPROG program (`saga-lsp __gocacheprog`) that answers the go
// command from the story's own cache (the upper, written) and, on a miss
// there, from a warm cache it only reads (the lower: the user's GOCACHE),
// so that a new story's first build is warm while nothing a story runs can
// write a cache another story, `verify` or the user reads
// (docs/security.md#warm-build-caches). Both are GOCACHE directories in
// cmd/go's own layout (disk.go); the protocol is cmd/go/internal/cacheprog's.
package gocache

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// MaxLowerEntry bounds an output read from the lower: a larger one is a
// miss (Go's biggest outputs, linked test binaries, are not cached).
const MaxLowerEntry = 1 << 30

// StatsFile, in the upper, gets a line of Stats per go command served
// (appended): how warm the story's builds were.
const StatsFile = "saga-lsp-gocacheprog.jsonl"

// The protocol (cmd/go/internal/cacheprog): JSON values, one a line, both
// ways; a put's body follows its request as a base64 JSON string.
type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// Stats counts what one go command asked.
type Stats struct {
	Gets      int64 `json:"gets"`
	UpperHits int64 `json:"upperHits"` // served from the story's own cache
	LowerHits int64 `json:"lowerHits"` // served from the warm cache
	Rejected  int64 `json:"rejected"`  // lower entries found but refused (corrupt, too big, not a file)
	Puts      int64 `json:"puts"`
}

// Options say where the layers are.
type Options struct {
	Upper string // the story's GOCACHE: written
	Lower string // the warm GOCACHE, read only ("" none)
}

// Serve answers the go command on in/out until it closes the cache or its
// input ends, and returns what it counted.
func Serve(in io.Reader, out io.Writer, o Options) (Stats, error) {
	if !filepath.IsAbs(o.Upper) || o.Lower != "" && !filepath.IsAbs(o.Lower) {
		return Stats{}, fmt.Errorf("GOCACHEPROG: --upper and --lower must be absolute paths")
	}
	root, err := openUpper(o.Upper)
	if err != nil {
		return Stats{}, fmt.Errorf("GOCACHEPROG: the story's GOCACHE: %w", err)
	}
	defer root.Close()
	s := &server{upper: layer{dir: o.Upper, maxSize: 1 << 62, root: root}}
	if o.Lower != "" {
		s.lower = &layer{dir: o.Lower, verify: true, maxSize: MaxLowerEntry}
		raiseTestExpire(root, testExpire(o.Lower))
	}
	bw := bufio.NewWriter(out)
	s.enc, s.flush = json.NewEncoder(bw), bw.Flush
	if err := s.reply(response{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return Stats{}, err
	}
	err = s.loop(json.NewDecoder(bufio.NewReaderSize(in, 64<<10)))
	s.wg.Wait()
	appendStats(root, s.stats())
	return s.stats(), err
}

type server struct {
	upper layer
	lower *layer

	mu    sync.Mutex // guards enc and flush
	enc   *json.Encoder
	flush func() error
	wg    sync.WaitGroup

	gets, upperHits, lowerHits, rejected, puts atomic.Int64
}

func (s *server) loop(dec *json.Decoder) error {
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil // the go command ended without a close
			}
			return fmt.Errorf("GOCACHEPROG: read a request: %w", err)
		}
		var body []byte
		if req.BodySize > 0 {
			if err := dec.Decode(&body); err != nil {
				return fmt.Errorf("GOCACHEPROG: read the body of request %d: %w", req.ID, err)
			}
		}
		switch req.Command {
		case "close":
			s.wg.Wait()
			return s.reply(response{ID: req.ID})
		case "get":
			s.wg.Go(func() { s.reply(s.get(req)) })
		case "put":
			s.wg.Go(func() { s.reply(s.put(req, body)) })
		default:
			s.reply(response{ID: req.ID, Err: fmt.Sprintf("unknown command %q", req.Command)})
		}
	}
}

func (s *server) reply(r response) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.enc.Encode(r); err != nil {
		return err
	}
	return s.flush()
}

// get answers from the upper, else from the lower; anything wrong with an
// entry is a miss.
func (s *server) get(req request) response {
	s.gets.Add(1)
	miss := response{ID: req.ID, Miss: true}
	if len(req.ActionID) != hashSize {
		return miss
	}
	if e, p, err := s.upper.get(req.ActionID); err == nil {
		s.upperHits.Add(1)
		return hit(req.ID, e, p)
	}
	if s.lower == nil {
		return miss
	}
	e, p, err := s.lower.get(req.ActionID)
	switch {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, errExecutable):
		return miss
	case err != nil:
		s.rejected.Add(1)
		return miss
	}
	s.lowerHits.Add(1)
	return hit(req.ID, e, p)
}

func hit(id int64, e entry, p string) response {
	t := e.time
	return response{ID: id, OutputID: e.output[:], Size: e.size, Time: &t, DiskPath: p}
}

// put writes to the upper only.
func (s *server) put(req request, body []byte) response {
	s.puts.Add(1)
	sum := sha256.Sum256(body)
	if len(req.ActionID) != hashSize || int64(len(body)) != req.BodySize || string(sum[:]) != string(req.OutputID) {
		return response{ID: req.ID, Err: "put: the body does not match its size and output id"}
	}
	p, err := s.upper.put(req.ActionID, req.OutputID, body)
	if err != nil {
		return response{ID: req.ID, Err: fmt.Sprintf("put into %s: %v", s.upper.dir, err)}
	}
	return response{ID: req.ID, DiskPath: p}
}

func (s *server) stats() Stats {
	return Stats{Gets: s.gets.Load(), UpperHits: s.upperHits.Load(), LowerHits: s.lowerHits.Load(), Rejected: s.rejected.Load(), Puts: s.puts.Load()}
}
