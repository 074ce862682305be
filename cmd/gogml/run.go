package main

import (
	"errors"
	"io"
)

// runRun is replaced by the decoder front end.
func runRun(args []string, stdout, stderr io.Writer) error {
	return errors.New("run: not built yet")
}
