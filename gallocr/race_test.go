//go:build race

package gallocr

const raceEnabled = true
