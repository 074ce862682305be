//go:build race

package llama

// raceEnabled: the llama.cpp comparison (tens of seconds) is skipped under
// the race detector; the plain test run covers it.
const raceEnabled = true
