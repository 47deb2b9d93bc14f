package epic

// WithStepped has the runner call f in its loop after each step.
func WithStepped(o Options, f func()) Options {
	o.stepped = f
	return o
}
