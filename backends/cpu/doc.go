// Package cpu is gogml's host backend: a buffer type whose buffers are
// anonymous memory mappings outside the Go heap (optionally on transparent
// huge pages and locked into RAM), and a Backend that runs graphs on the
// host's cores, each node's rows split across a pool of worker goroutines.
//
// A Backend's methods are safe for concurrent use; a Buffer may be freed
// while other goroutines (or a Compute) use it: Free waits for them, and
// later uses fail with runtime.ErrFreed.
package cpu
