package membench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of one Run: every sample of every figure.
type Report struct {
	Start   time.Time    `json:"start"`
	Seconds float64      `json:"seconds"`
	Host    HostInfo     `json:"host"`
	Config  ReportConfig `json:"config"`
	Targets []TargetInfo `json:"targets"`
	Sizes   []uint64     `json:"sizes"`
	Results []Result     `json:"results"`
	// Notes say what the run left out and why (sizes above a type's max
	// size or the host-memory budget).
	Notes []string `json:"notes,omitempty"`
}

// HostInfo describes the machine a report comes from.
type HostInfo struct {
	GOOS                 string `json:"goos"`
	GOARCH               string `json:"goarch"`
	CPU                  string `json:"cpu,omitempty"`
	NumCPU               int    `json:"num_cpu"`
	GoVersion            string `json:"go_version"`
	PageSize             int    `json:"page_size"`
	TransparentHugePages string `json:"transparent_hugepages,omitempty"`
}

// ReportConfig is the Config a report was made with, defaults filled in.
type ReportConfig struct {
	MinSize     uint64 `json:"min_size"`
	MaxSize     uint64 `json:"max_size"`
	Reps        int    `json:"reps"`
	Warmup      int    `json:"warmup"`
	SampleBytes uint64 `json:"sample_bytes"`
	MaxIters    int    `json:"max_iters"`
}

// TargetInfo describes one measured target.
type TargetInfo struct {
	Name       string   `json:"name"`
	BufferType string   `json:"buffer_type"`
	IsHost     bool     `json:"is_host"`
	Ops        []string `json:"ops"`
}

// Result is one figure: an operation on a target at one size.
type Result struct {
	Target string `json:"target"`
	Op     string `json:"op"`
	Size   uint64 `json:"size"`
	// Iters is the number of operations timed together in one sample.
	Iters int `json:"iters"`
	// Timing is "host" (wall clock) or "device" (the device's events).
	Timing string `json:"timing"`
	// Samples holds the seconds per operation of each repetition.
	Samples []float64 `json:"samples_s"`
	// MedianS, MinS and MaxS summarize Samples.
	MedianS float64 `json:"median_s"`
	MinS    float64 `json:"min_s"`
	MaxS    float64 `json:"max_s"`
	// Bandwidths in GB/s (1e9 bytes per second): Size over MedianS, MaxS
	// (the slowest sample) and MinS (the fastest). Zero for OpAllocFree.
	MedianGBps float64 `json:"median_gbps,omitempty"`
	MinGBps    float64 `json:"min_gbps,omitempty"`
	MaxGBps    float64 `json:"max_gbps,omitempty"`
	// Error is set, and Samples empty, when the operation failed.
	Error string `json:"error,omitempty"`
}

// summarize fills the median, min and max from Samples.
func (r *Result) summarize() {
	if len(r.Samples) == 0 {
		return
	}
	s := slices.Clone(r.Samples)
	slices.Sort(s)
	r.MinS, r.MaxS = s[0], s[len(s)-1]
	if m := len(s) / 2; len(s)%2 == 1 {
		r.MedianS = s[m]
	} else {
		r.MedianS = (s[m-1] + s[m]) / 2
	}
	if IsBandwidth(r.Op) {
		gbps := func(sec float64) float64 {
			if sec <= 0 {
				// Below the timer's resolution: report the bound it gives.
				sec = 1e-9
			}
			return float64(r.Size) / sec / 1e9
		}
		r.MedianGBps, r.MinGBps, r.MaxGBps = gbps(r.MedianS), gbps(r.MaxS), gbps(r.MinS)
	}
}

// Find returns the result of op on target at size n, if any.
func (rep *Report) Find(target, op string, n uint64) (Result, bool) {
	for _, r := range rep.Results {
		if r.Target == target && r.Op == op && r.Size == n {
			return r, true
		}
	}
	return Result{}, false
}

// WriteJSON writes the report, every sample included, as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// ReadJSON reads a report written by WriteJSON.
func ReadJSON(r io.Reader) (*Report, error) {
	var rep Report
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return nil, fmt.Errorf("membench: reading report: %w", err)
	}
	return &rep, nil
}

// cell formats a result for the table: the median with the spread as a
// percentage of it (half of max minus min).
func cell(r Result, ok bool) string {
	switch {
	case !ok:
		return ""
	case r.Error != "":
		return "error"
	case len(r.Samples) == 0:
		return "-"
	}
	var med, lo, hi float64
	var s string
	if IsBandwidth(r.Op) {
		med, lo, hi = r.MedianGBps, r.MinGBps, r.MaxGBps
		s = formatBandwidth(med * 1e9)
	} else {
		med, lo, hi = r.MedianS, r.MinS, r.MaxS
		s = formatDuration(med)
	}
	if med > 0 {
		s += fmt.Sprintf(" ±%.0f%%", (hi-lo)/2/med*100)
	}
	return s
}

// WriteTable writes one table per target, sizes down and operations
// across, with the host copy reference as the last column, then the ratio
// table (WriteRatios) and any errors.
func (rep *Report) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "membench: %s, %d CPUs, %s; %d reps after %d warm-up; bandwidth in GB/s (1e9 B/s), median ±half the spread; alloc_free is time per alloc+free\n",
		rep.Host.CPU, rep.Host.NumCPU, rep.Host.GoVersion, rep.Config.Reps, rep.Config.Warmup)
	for _, ti := range rep.Targets {
		timingNote := "host timing"
		for _, r := range rep.Results {
			if r.Target == ti.Name && r.Timing == "device" {
				timingNote = "device timing"
				break
			}
		}
		fmt.Fprintf(ew, "\n%s (buffer type %s, %s)\n", ti.Name, ti.BufferType, timingNote)
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "size\t")
		for _, op := range ti.Ops {
			fmt.Fprintf(tw, "%s\t", op)
		}
		fmt.Fprintf(tw, "%s\t\n", OpHostCopy)
		for _, n := range rep.Sizes {
			fmt.Fprintf(tw, "%s\t", FormatSize(n))
			for _, op := range ti.Ops {
				r, ok := rep.Find(ti.Name, op, n)
				fmt.Fprintf(tw, "%s\t", cell(r, ok))
			}
			r, ok := rep.Find(HostTarget, OpHostCopy, n)
			fmt.Fprintf(tw, "%s\t\n", cell(r, ok))
		}
		tw.Flush()
	}
	fmt.Fprintln(ew)
	if err := rep.WriteRatios(ew); err != nil {
		return err
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(ew, "note: %s\n", n)
	}
	var errs []string
	for _, r := range rep.Results {
		if r.Error != "" {
			errs = append(errs, fmt.Sprintf("  %s %s %s: %s", r.Target, r.Op, FormatSize(r.Size), r.Error))
		}
	}
	if len(errs) > 0 {
		fmt.Fprintf(ew, "\n%d failed measurements:\n%s\n", len(errs), strings.Join(errs, "\n"))
	}
	return ew.err
}

// ratioSizes picks at most about eight sizes, every fourth power of two,
// the largest included.
func (rep *Report) ratioSizes() []uint64 {
	if len(rep.Sizes) <= 8 {
		return rep.Sizes
	}
	step := (len(rep.Sizes) + 6) / 7
	var out []uint64
	for i := 0; i < len(rep.Sizes); i += step {
		out = append(out, rep.Sizes[i])
	}
	if last := rep.Sizes[len(rep.Sizes)-1]; out[len(out)-1] != last {
		out = append(out, last)
	}
	return out
}

// Ratio returns the median bandwidth of op on target at size n divided by
// the host copy's median bandwidth at n; false when either is missing.
func (rep *Report) Ratio(target, op string, n uint64) (float64, bool) {
	r, ok := rep.Find(target, op, n)
	h, hok := rep.Find(HostTarget, OpHostCopy, n)
	if !ok || !hok || r.MedianGBps <= 0 || h.MedianGBps <= 0 {
		return 0, false
	}
	return r.MedianGBps / h.MedianGBps, true
}

// WriteRatios writes every bandwidth figure as a ratio to the host copy
// bandwidth at the same size, for a selection of sizes, under a first row
// with the host copy bandwidth itself.
func (rep *Report) WriteRatios(w io.Writer) error {
	sizes := rep.ratioSizes()
	ew := &errWriter{w: w}
	fmt.Fprintln(ew, "Median bandwidth as a ratio to the host copy at the same size (first row: host copy in GB/s)")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "target\top\t")
	for _, n := range sizes {
		fmt.Fprintf(tw, "%s\t", FormatSize(n))
	}
	fmt.Fprint(tw, "\n", HostTarget, "\t", OpHostCopy, "\t")
	for _, n := range sizes {
		r, _ := rep.Find(HostTarget, OpHostCopy, n)
		fmt.Fprintf(tw, "%s\t", formatBandwidth(r.MedianGBps*1e9))
	}
	fmt.Fprintln(tw)
	for _, ti := range rep.Targets {
		for _, op := range ti.Ops {
			if !IsBandwidth(op) {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t", ti.Name, op)
			for _, n := range sizes {
				if x, ok := rep.Ratio(ti.Name, op, n); ok {
					fmt.Fprintf(tw, "%.2f\t", x)
				} else {
					fmt.Fprint(tw, "-\t")
				}
			}
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()
	return ew.err
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, nil
}

// isFinitePositive reports whether x can be drawn on a log axis.
func isFinitePositive(x float64) bool { return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }
