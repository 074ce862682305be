// Package cuda holds gogml's CUDA kernels: the CUDA C sources (*.cu) and
// the PTX generated from them (*.ptx, committed, so that neither users nor
// CI need nvcc). The CUDA backend loads the PTX through the driver at run
// time. Regenerate with `make ptx` (or ./genptx.sh) after editing a .cu.
package cuda

import "embed"

// PTX holds the generated PTX modules, one per .cu source, by file name
// (e.g. "elementwise.ptx").
//
//go:embed *.ptx
var PTX embed.FS

// Sources holds the CUDA C sources the PTX was generated from, and the
// CPU emulator (emu/) that runs them on the host in tests.
//
//go:embed *.cu *.cuh emu/*.h emu/*.cpp
var Sources embed.FS
