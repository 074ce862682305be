package cuda

import (
	"testing"
	"time"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// TestPreflight is the device check's first step (scripts/gpu-check/run.sh
// runs it alone, under a minute, and stops when it fails): open CUDA0
// (driver, primary context, every embedded PTX module JIT-compiled, whose
// info logs it prints), then one copy host->device, one copy
// device->host and one kernel launch, each timed and checked. Every
// failure names its step; without a device it skips like the other
// device tests (GOGML_REQUIRE_CUDA=1 makes that a failure).
func TestPreflight(t *testing.T) {
	t0 := time.Now()
	b := newTestBackend(t)
	open := time.Since(t0)
	var ver int32
	if err := b.dev.drv.check("cuDriverGetVersion", b.dev.drv.cuDriverGetVersion(&ver)); err != nil {
		t.Fatalf("preflight failed at driver version: %v", err)
	}
	info := b.Device()
	t.Logf("preflight: open: %s: %s, %d MiB free of %d MiB, driver API %d.%d, %d PTX modules JIT-compiled, %v",
		info.Name, info.Description, info.FreeMemory>>20, info.TotalMemory>>20, ver/1000, ver%1000/10, len(b.mods), open)
	for _, l := range b.jitLog {
		if len(l) > 2048 {
			l = l[:2048] + " ..."
		}
		t.Logf("preflight: JIT info log %s", l)
	}

	const n = 1 << 16
	ctx := runtime.NewContext()
	x := ctx.NewTensor(runtime.TypeF32, n)
	y := ctx.Scale(x, 2)
	if ctx.Err() != nil {
		t.Fatal(ctx.Err())
	}
	buf, err := gallocr.AllocCtxTensors(ctx, b.DeviceBufferType())
	if err != nil {
		t.Fatalf("preflight failed at allocating %d bytes of CUDA0: %v", 2*4*n, err)
	}
	defer buf.Free()
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i%1000) - 500.5
	}

	t1 := time.Now()
	if err := runtime.SetTensorData(x, f32Bytes(vals), 0); err != nil {
		t.Fatalf("preflight failed at copy host->device: %v", err)
	}
	if err := b.Synchronize(); err != nil {
		t.Fatalf("preflight failed at copy host->device: %v", err)
	}
	t.Logf("preflight: copy host->device of %d bytes ok, %v", 4*n, time.Since(t1))

	t1 = time.Now()
	got := readF32(t, x)
	for i, v := range got {
		if v != vals[i] {
			t.Fatalf("preflight failed at copy device->host: element %d = %v, want %v (the round trip lost the data)", i, v, vals[i])
		}
	}
	t.Logf("preflight: copy device->host of %d bytes ok, %v", 4*n, time.Since(t1))

	t1 = time.Now()
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(y); err != nil {
		t.Fatal(err)
	}
	if err := b.Compute(g); err != nil {
		t.Fatalf("preflight failed at kernel launch (scale): %v", err)
	}
	if err := b.Synchronize(); err != nil {
		t.Fatalf("preflight failed at kernel launch (scale): %v", err)
	}
	launch := time.Since(t1)
	got = readF32(t, y)
	for i, v := range got {
		if v != 2*vals[i] {
			t.Fatalf("preflight failed at kernel launch (scale): element %d = %v, want %v", i, v, 2*vals[i])
		}
	}
	t.Logf("preflight: kernel launch (scale of %d f32) ok, %v", n, launch)
}
