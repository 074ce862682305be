package membench

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// ErrSize marks a size string that ParseSize cannot read.
var ErrSize = errors.New("bad size")

// ParseSize reads a byte count: a decimal integer with an optional binary
// suffix K, M, G or T (also KB/KiB etc., all meaning powers of 1024) or B.
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	u := strings.ToUpper(t)
	mult := uint64(1)
	for _, sfx := range []struct {
		s string
		m uint64
	}{
		{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
		{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"TB", 1 << 40},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
	} {
		if strings.HasSuffix(u, sfx.s) {
			u, mult = strings.TrimSpace(u[:len(u)-len(sfx.s)]), sfx.m
			break
		}
	}
	if u == "" || u[0] == '+' || u[0] == '-' {
		return 0, fmt.Errorf("%w: %q", ErrSize, s)
	}
	n, err := strconv.ParseUint(u, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q", ErrSize, s)
	}
	hi, lo := bits.Mul64(n, mult)
	if hi != 0 {
		return 0, fmt.Errorf("%w: %q overflows 64 bits", ErrSize, s)
	}
	return lo, nil
}

// FormatSize writes n bytes briefly in binary units: "4 KiB", "256 MiB",
// "1000 B".
func FormatSize(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for n >= 1024 && n%1024 == 0 && i < len(units)-1 {
		n /= 1024
		i++
	}
	return fmt.Sprintf("%d %s", n, units[i])
}

// formatBandwidth writes bytes per second in GB/s with three significant
// digits.
func formatBandwidth(bps float64) string {
	gbs := bps / 1e9
	switch {
	case gbs == 0 || math.IsNaN(gbs):
		return "-"
	case gbs >= 100:
		return fmt.Sprintf("%.0f", gbs)
	case gbs >= 10:
		return fmt.Sprintf("%.1f", gbs)
	case gbs >= 1:
		return fmt.Sprintf("%.2f", gbs)
	}
	return fmt.Sprintf("%.3f", gbs)
}

// formatDuration writes seconds with a unit and three significant digits.
func formatDuration(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.3gs", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.3gms", s*1e3)
	case s >= 1e-6:
		return fmt.Sprintf("%.3gµs", s*1e6)
	}
	return fmt.Sprintf("%.3gns", s*1e9)
}
