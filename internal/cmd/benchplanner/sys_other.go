//go:build !linux

package main

import (
	"os"
	"time"
)

// blockingPipe returns os.Pipe's pipe: the harness's timing method is
// Linux's (the peer runs only there), so elsewhere it needs only to work.
func blockingPipe() (r, w *os.File, err error) { return os.Pipe() }

// processCPU returns the wall clock in ns: the process CPU clock's raw
// system call is Linux's, and the harness's method with it.
func processCPU() int64 { return time.Now().UnixNano() }
