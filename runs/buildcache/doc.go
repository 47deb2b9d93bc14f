// Package buildcache owns the stories' build caches: where a story's
// caches live and their creation in a folder of the user's alone
// (cache.go: CachePath, ChecksCachePath, CacheDir, ChecksCacheDir, the
// environment that points a run's Go, npm, pip and XDG caches into them),
// the warm caches a new story starts from (warm.go: FindWarm, Warm, the
// GOCACHEPROG command line) and the npm cache seeded from the user's
// (npmseed.go: SeedNpm, never through a link). Its child gocache is the
// GOCACHEPROG program that serves Go's cache (docs/security.md#warm-build-caches).
// It reads the run protocol's environment (package runs) and writes
// through internal/filesafe.
package buildcache
