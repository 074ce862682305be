package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// blockingPipe returns a pipe whose files are read and written with
// blocking system calls: made by pipe2(2) and wrapped with os.NewFile,
// they stay out of the runtime's network poller.
func blockingPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(p[0]), "ggml side stdout"), os.NewFile(uintptr(p[1]), "ggml side stdout (its end)"), nil
}
