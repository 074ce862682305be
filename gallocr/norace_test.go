//go:build !race

package gallocr

const raceEnabled = false
