package main

import (
	"os"
	"unsafe"

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

// processCPU reads the process's CPU clock the way the C side's
// clock_gettime does: that clock has no vDSO fast path, so glibc makes
// the system call directly, and so does this, raw, without the Go
// runtime's entersyscall and exitsyscall around it (~60 ns more per
// read, which fell inside gogml's timed interval only). The call cannot
// block.
func processCPU() int64 {
	var ts unix.Timespec
	_, _, errno := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_PROCESS_CPUTIME_ID, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0
	}
	return ts.Nano()
}
