package testkit

import (
	"bytes"
	"sync"
)

// LogBuffer is a log a program's goroutines write (a slog handler's
// writer) and a test reads while they run.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is the log so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Take returns the log so far and empties it.
func (l *LogBuffer) Take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.b.String()
	l.b.Reset()
	return out
}
