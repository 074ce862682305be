package membench

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/runtime"
)

// tinyConfig keeps a run to well under a second.
func tinyConfig() Config {
	return Config{MinSize: 4 << 10, MaxSize: 32 << 10, Reps: 3, Warmup: 1, SampleBytes: 64 << 10, MaxIters: 4}
}

// TestRunCPU runs membench on the CPU buffer types over a tiny size range
// and checks the JSON: every operation and size present, positive figures,
// medians within min and max.
func TestRunCPU(t *testing.T) {
	targets := CPUTargets()
	if len(targets) != 3 {
		t.Fatalf("%d CPU targets, want 3", len(targets))
	}
	var progress bytes.Buffer
	cfg := tinyConfig()
	cfg.Progress = &progress
	rep, err := Run(context.Background(), targets, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(&js)
	if err != nil {
		t.Fatal(err)
	}

	wantSizes := []uint64{4 << 10, 8 << 10, 16 << 10, 32 << 10}
	if len(back.Sizes) != len(wantSizes) {
		t.Fatalf("sizes %v, want %v", back.Sizes, wantSizes)
	}
	for i, n := range wantSizes {
		if back.Sizes[i] != n {
			t.Fatalf("sizes %v, want %v", back.Sizes, wantSizes)
		}
	}
	wantOps := map[string][]string{
		"CPU":        {OpAllocFree, OpFirstTouch, OpClear, OpSet, OpGet, OpCopy},
		"CPU_Huge":   {OpAllocFree, OpFirstTouch, OpClear, OpSet, OpGet, OpCopy, "copy_to:CPU", "copy_from:CPU"},
		"CPU_Locked": {OpAllocFree, OpFirstTouch, OpClear, OpSet, OpGet, OpCopy, "copy_to:CPU", "copy_from:CPU"},
		HostTarget:   {OpHostCopy},
	}
	for target, ops := range wantOps {
		for _, op := range ops {
			for _, n := range wantSizes {
				r, ok := back.Find(target, op, n)
				if !ok {
					t.Errorf("%s %s %d: missing", target, op, n)
					continue
				}
				if r.Error != "" {
					if target == "CPU_Locked" && strings.Contains(r.Error, "RLIMIT_MEMLOCK") {
						continue // locked memory not allowed on this machine
					}
					t.Errorf("%s %s %d: %s", target, op, n, r.Error)
					continue
				}
				checkResult(t, r, cfg.Reps)
			}
		}
	}
	// 6 ops for CPU, 8 for the other two, plus the host copy.
	if want := len(wantSizes) * (6 + 8 + 8 + 1); len(back.Results) != want {
		t.Errorf("%d results, want %d", len(back.Results), want)
	}
	if !strings.Contains(progress.String(), "membench [") {
		t.Error("no progress line written")
	}

	var table bytes.Buffer
	if err := back.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CPU_Huge (buffer type CPU_Huge", "first_touch", "host_copy", "32 KiB", "ratio to the host copy"} {
		if !strings.Contains(table.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, table.String())
		}
	}
	dir := t.TempDir()
	for _, name := range []string{"bench.png", "bench.svg"} {
		if err := back.Plot(filepath.Join(dir, name)); err != nil {
			t.Fatalf("Plot(%s): %v", name, err)
		}
	}
	if err := back.Plot(filepath.Join(dir, "bench.gif")); err == nil {
		t.Error("Plot to .gif: no error")
	}
}

func checkResult(t *testing.T, r Result, reps int) {
	t.Helper()
	if len(r.Samples) != reps {
		t.Errorf("%s %s %d: %d samples, want %d", r.Target, r.Op, r.Size, len(r.Samples), reps)
	}
	for _, s := range r.Samples {
		if !(s > 0) {
			t.Errorf("%s %s %d: sample %g not positive", r.Target, r.Op, r.Size, s)
		}
	}
	if !(r.MinS > 0 && r.MinS <= r.MedianS && r.MedianS <= r.MaxS) {
		t.Errorf("%s %s %d: median %g not within [%g, %g]", r.Target, r.Op, r.Size, r.MedianS, r.MinS, r.MaxS)
	}
	if r.Iters < 1 {
		t.Errorf("%s %s %d: %d iterations", r.Target, r.Op, r.Size, r.Iters)
	}
	if IsBandwidth(r.Op) {
		if !(r.MinGBps > 0 && r.MinGBps <= r.MedianGBps && r.MedianGBps <= r.MaxGBps) {
			t.Errorf("%s %s %d: median %g GB/s not within [%g, %g]", r.Target, r.Op, r.Size, r.MedianGBps, r.MinGBps, r.MaxGBps)
		}
	} else if r.MedianGBps != 0 {
		t.Errorf("%s %s: latency op with a bandwidth", r.Target, r.Op)
	}
}

// hookTarget exercises the optional hooks with host memory.
type hookTarget struct {
	Target
	peers               []string
	pinned, timed, sync int
}

func (h *hookTarget) AllocPinned(n uint64) ([]byte, func() error, error) {
	h.pinned++
	return make([]byte, n), func() error { return nil }, nil
}

func (h *hookTarget) TimeDevice(run func() error) (time.Duration, error) {
	h.timed++
	start := time.Now()
	err := run()
	return time.Since(start) + time.Nanosecond, err
}

func (h *hookTarget) Synchronize() error { h.sync++; return nil }

func (h *hookTarget) Peers() []string { return h.peers }

func TestHooksAndPeers(t *testing.T) {
	plain := NewTarget("", cpu.DefaultBufferType())
	lim, err := cpu.NewBufferType(cpu.BufferTypeOptions{Name: "Small", MaxSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	small := NewTarget("", lim)
	dev := &hookTarget{Target: NewTarget("Dev", cpu.DefaultBufferType()), peers: []string{"Small"}}
	cfg := tinyConfig()
	cfg.MaxSize = 16 << 10
	rep, err := Run(context.Background(), []Target{plain, small, dev}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if dev.pinned == 0 || dev.timed == 0 {
		t.Errorf("hooks not used: pinned %d timed %d", dev.pinned, dev.timed)
	}
	for _, op := range []string{OpSetPinned, OpGetPinned, "copy_to:CPU", "copy_from:Small", OpCopy} {
		r, ok := rep.Find("Dev", op, 4<<10)
		if !ok || r.Error != "" || r.Timing != "device" {
			t.Errorf("Dev %s: %+v", op, r)
		}
	}
	// Small is measured only up to its max size; copies with it above that
	// are recorded as failed.
	if _, ok := rep.Find("Small", OpSet, 16<<10); ok {
		t.Error("Small measured above its max size")
	}
	if r, ok := rep.Find("Dev", "copy_to:Small", 16<<10); !ok || r.Error == "" {
		t.Errorf("copy above the peer's max size: %+v", r)
	}
	// Only some ops.
	cfg.Ops = []string{OpSet, "copy_to"}
	rep, err = Run(context.Background(), []Target{plain, small, dev}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Targets[2].Ops; strings.Join(got, ",") != "set,copy_to:CPU,copy_to:Small" {
		t.Errorf("ops with a filter: %v", got)
	}
}

func TestRunErrors(t *testing.T) {
	plain := NewTarget("", cpu.DefaultBufferType())
	ctx := context.Background()
	tests := []struct {
		name    string
		targets []Target
		cfg     Config
	}{
		{"no targets", nil, Config{}},
		{"duplicate", []Target{plain, plain}, Config{MaxSize: 4096}},
		{"reserved name", []Target{NewTarget(HostTarget, cpu.DefaultBufferType())}, Config{MaxSize: 4096}},
		{"max below min", []Target{plain}, Config{MinSize: 8192, MaxSize: 4096}},
		{"unknown op", []Target{plain}, Config{MaxSize: 4096, Ops: []string{"teleport"}}},
		{"unknown peer", []Target{plain, &hookTarget{Target: NewTarget("X", cpu.DefaultBufferType()), peers: []string{"nope"}}}, Config{MaxSize: 4096}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Run(ctx, tc.targets, tc.cfg); err == nil {
				t.Fatal("no error")
			}
		})
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Run(cancelled, []Target{plain}, tinyConfig()); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
}

func TestRegistry(t *testing.T) {
	closed := 0
	r := NewRegistry(CPUProvider())
	r.Add(Provider{Name: "absent", Open: func() ([]Target, func() error, error) {
		return nil, nil, runtime.ErrUnsupported
	}})
	r.Add(Provider{Name: "extra", Open: func() ([]Target, func() error, error) {
		return []Target{NewTarget("Extra", cpu.DefaultBufferType())}, func() error { closed++; return nil }, nil
	}})
	ts, closeAll, skipped, err := r.Open()
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 4 || ts[0].Name() != "CPU" || ts[3].Name() != "Extra" {
		t.Errorf("targets %v", ts)
	}
	if len(skipped) != 1 || !errors.Is(skipped[0], runtime.ErrUnsupported) {
		t.Errorf("skipped %v", skipped)
	}
	if err := closeAll(); err != nil || closed != 1 {
		t.Errorf("close: %v, closed %d", err, closed)
	}
	if _, _, _, err := NewRegistry().Open(); err == nil {
		t.Error("empty registry opened")
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		err  bool
	}{
		{"4096", 4096, false},
		{"4K", 4 << 10, false},
		{"4k", 4 << 10, false},
		{"4KiB", 4 << 10, false},
		{"256M", 256 << 20, false},
		{"256 MiB", 256 << 20, false},
		{"1G", 1 << 30, false},
		{"2TB", 2 << 40, false},
		{"17B", 17, false},
		{"", 0, true},
		{"M", 0, true},
		{"-1K", 0, true},
		{"+1K", 0, true},
		{"1.5M", 0, true},
		{"99999999999T", 0, true},
		{"18446744073709551616", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			if tc.err {
				if !errors.Is(err, ErrSize) {
					t.Fatalf("ParseSize(%q) = %d, %v; want ErrSize", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
	for _, n := range []uint64{0, 1, 1000, 4096, 3 << 20, 1 << 30} {
		s := FormatSize(n)
		if back, err := ParseSize(s); err != nil || back != n {
			t.Errorf("FormatSize(%d) = %q, parses to %d, %v", n, s, back, err)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"4K", "256 MiB", "1G", "17", "", "-3", "1e9", "9999999999999T"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if !errors.Is(err, ErrSize) {
				t.Fatalf("ParseSize(%q): %v does not wrap ErrSize", s, err)
			}
			return
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Fatalf("ParseSize(%q) = %d; FormatSize round trip gives %d, %v", s, n, back, err)
		}
	})
}

// TestHostBudget: -max 1T used to allocate two 1 TiB Go slices for the host
// copy before anything else (a fatal out of memory). A max size whose host
// memory exceeds the budget is an error before any allocation; within it,
// progress comes as one plain line per size.
func TestHostBudget(t *testing.T) {
	cfg := Config{MinSize: 4 << 10, MaxSize: 1 << 40, Reps: 1, Warmup: -1, SampleBytes: 4 << 10, MaxIters: 1,
		Ops: []string{OpAllocFree}}
	_, err := Run(context.Background(), CPUTargets()[:1], cfg)
	if !errors.Is(err, ErrSize) || !strings.Contains(err.Error(), "lower the max size") {
		t.Fatalf("max 1 TiB: %v, want ErrSize asking for a lower max size", err)
	}
	cfg.MaxSize, cfg.HostBudget = 32<<10, 64<<10
	if _, err := Run(context.Background(), CPUTargets()[:1], cfg); !errors.Is(err, ErrSize) {
		t.Fatalf("max 32 KiB, budget 64 KiB: %v, want ErrSize (the alias gap does not fit)", err)
	}
	cfg.MaxSize = 16 << 10
	var progress bytes.Buffer
	cfg.Progress, cfg.ProgressLines = &progress, true
	rep, err := Run(context.Background(), CPUTargets()[:1], cfg)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(progress.String(), "\n"); lines != len(rep.Sizes) || strings.Contains(progress.String(), "\r") {
		t.Errorf("progress %q: want %d plain lines", progress.String(), len(rep.Sizes))
	}
}

// TestNoteAboveMaxSize: sizes above a target's max are not silently left
// out; the report says so.
func TestNoteAboveMaxSize(t *testing.T) {
	small, err := cpu.NewBufferType(cpu.BufferTypeOptions{Name: "SMALL", MaxSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	cfg := tinyConfig()
	cfg.Ops = []string{OpAllocFree}
	rep, err := Run(context.Background(), []Target{CPUTargets()[0], NewTarget("", small)}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "SMALL: sizes above its max buffer size 8 KiB not measured") {
		t.Fatalf("notes %q", rep.Notes)
	}
}

func TestCheckPlotPath(t *testing.T) {
	for path, ok := range map[string]bool{"a.png": true, "B.SVG": true, "x.txt": false, "noext": false} {
		if err := CheckPlotPath(path); (err == nil) != ok {
			t.Errorf("CheckPlotPath(%q) = %v", path, err)
		}
	}
}
