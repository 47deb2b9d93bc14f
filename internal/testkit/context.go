package testkit

import (
	"context"
	"time"
)

// ContextEnd is one way a wait ends by its context.
type ContextEnd struct {
	Name string
	// New makes the context; the wait must return Err (ctx.Err()).
	New func() (context.Context, context.CancelFunc)
	Err error
}

// ContextEnds are the ways a wait ends by its context: cancelled before the
// call, cancelled while waiting, its deadline passed while waiting (the
// last two after 50 ms).
func ContextEnds() []ContextEnd {
	return []ContextEnd{
		{"already cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
		{"cancelled while waiting", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
		{"deadline while waiting", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, context.DeadlineExceeded},
	}
}
