package cpu

import "testing"

// BenchmarkPoolDispatch reports the cost of one run of an empty job on
// two workers (the caller and one pool goroutine).
func BenchmarkPoolDispatch(b *testing.B) {
	p := newWorkerPool(2)
	defer p.stop()
	f := func(int, int) error { return nil }
	for i := 0; i < b.N; i++ {
		if err := p.run(2, f); err != nil {
			b.Fatal(err)
		}
	}
}
