//go:build opengl && !race

package opengl

const raceEnabled = false
