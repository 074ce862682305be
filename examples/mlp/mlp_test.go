package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func Example() {
	if err := run(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// graph: 5 nodes, compute buffer 96 bytes
	// y[0] = [-0.7420 -0.2880 -0.0540]
	// y[1] = [0.1800 -0.0380 -0.1790]
}

// TestPlainGo recomputes the MLP with loops and compares the printout.
func TestPlainGo(t *testing.T) {
	w1, b1 := floats(nIn*nHidden, 0.5), floats(nHidden, 0.1)
	w2, b2 := floats(nHidden*nOut, 0.5), floats(nOut, 0.1)
	in := []float32{1, 0, -1, 2, 0.5, 0.5, 0.5, 0.5}
	var want strings.Builder
	for n := 0; n < nBatch; n++ {
		h := make([]float32, nHidden)
		for j := range h {
			s := b1[j]
			for i := 0; i < nIn; i++ {
				s += w1[j*nIn+i] * in[n*nIn+i]
			}
			h[j] = max(s, 0)
		}
		y := make([]float32, nOut)
		for k := range y {
			s := b2[k]
			for j := range h {
				s += w2[k*nHidden+j] * h[j]
			}
			y[k] = s
		}
		fmt.Fprintf(&want, "y[%d] = %.4f\n", n, y)
	}
	var got strings.Builder
	if err := run(&got); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(got.String(), want.String()) {
		t.Fatalf("got\n%s\nwant\n%s", got.String(), want.String())
	}
}
