package sample

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// draws samples n tokens from logits and counts them.
func draws(t *testing.T, p Params, logits []float32, n int) map[int32]int {
	t.Helper()
	s, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int32]int{}
	for range n {
		id, err := s.Sample(logits)
		if err != nil {
			t.Fatal(err)
		}
		got[id]++
	}
	return got
}

func TestSample(t *testing.T) {
	// Probabilities 0.5, 0.3, 0.2 at temperature 1 (ids 2, 0, 1).
	probs := []float32{float32(math.Log(0.3)), float32(math.Log(0.2)), float32(math.Log(0.5))}
	for _, tc := range []struct {
		name   string
		p      Params
		logits []float32
		want   map[int32]float64 // expected frequencies
	}{
		{"greedy", Params{}, probs, map[int32]float64{2: 1}},
		{"greedy ties take the lowest id", Params{Temp: -1}, []float32{1, 3, 3, 2}, map[int32]float64{1: 1}},
		{"infinite logit", Params{Temp: 1}, []float32{1, float32(math.Inf(1)), 3}, map[int32]float64{1: 1}},
		{"temp 1", Params{Temp: 1, TopP: 1}, probs, map[int32]float64{2: 0.5, 0: 0.3, 1: 0.2}},
		{"temp 0.5 sharpens", Params{Temp: 0.5, TopP: 1}, probs, map[int32]float64{2: 25 / 38.0, 0: 9 / 38.0, 1: 4 / 38.0}},
		{"top-k 1", Params{Temp: 5, TopK: 1, TopP: 1}, probs, map[int32]float64{2: 1}},
		{"top-k 2", Params{Temp: 1, TopK: 2, TopP: 1}, probs, map[int32]float64{2: 0.625, 0: 0.375}},
		{"top-p 0.6", Params{Temp: 1, TopP: 0.6}, probs, map[int32]float64{2: 0.625, 0: 0.375}},
		{"top-p 0.5 keeps one", Params{Temp: 1, TopP: 0.5}, probs, map[int32]float64{2: 1}},
		{"min-p 0.5", Params{Temp: 1, TopP: 1, MinP: 0.5}, probs, map[int32]float64{2: 0.625, 0: 0.375}},
		{"defaults", DefaultParams(), probs, map[int32]float64{2: 0.5 / 0.8 * 0.8, 0: 0.3 / 0.8 * 0.8, 1: 0.2 / 0.8 * 0.8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 20000
			got := draws(t, tc.p, tc.logits, n)
			if tc.name == "defaults" {
				// llama.cpp's defaults keep all three here; temp 0.8
				// sharpens 0.5:0.3:0.2 to these.
				z := math.Pow(0.5, 1.25) + math.Pow(0.3, 1.25) + math.Pow(0.2, 1.25)
				tc.want = map[int32]float64{2: math.Pow(0.5, 1.25) / z, 0: math.Pow(0.3, 1.25) / z, 1: math.Pow(0.2, 1.25) / z}
			}
			for id, c := range got {
				if _, ok := tc.want[id]; !ok {
					t.Errorf("drew id %d (%d times), want only %v", id, c, tc.want)
				}
			}
			for id, f := range tc.want {
				if d := math.Abs(float64(got[id])/n - f); d > 0.015 {
					t.Errorf("id %d drawn %.4f of the time, want %.4f", id, float64(got[id])/n, f)
				}
			}
		})
	}
}

// TestSeed: the same seed gives the same tokens, another seed others.
func TestSeed(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	logits := make([]float32, 1000)
	for i := range logits {
		logits[i] = float32(r.NormFloat64())
	}
	run := func(seed uint64) string {
		p := DefaultParams()
		p.Temp, p.TopK, p.Seed = 1.5, 0, seed
		s, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int32
		for range 32 {
			id, err := s.Sample(logits)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return fmt.Sprint(ids)
	}
	a, b, c := run(7), run(7), run(8)
	if a != b {
		t.Errorf("seed 7 twice: %s and %s", a, b)
	}
	if a == c {
		t.Errorf("seeds 7 and 8 drew the same %s", a)
	}
}

// TestTopK: the heap keeps exactly the k best, as a full sort does.
func TestTopK(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 5, 100, 1000} {
		logits := make([]float32, n)
		for i := range logits {
			logits[i] = float32(r.IntN(20)) // many ties
		}
		all := topK(nil, logits, 0)
		for _, k := range []int{1, 2, 3, 40, n - 1, n, n + 1} {
			if k < 1 {
				continue
			}
			got := topK(nil, logits, k)
			want := all[:min(k, n)]
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("n %d k %d: %v, want %v", n, k, got, want)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	for _, p := range []Params{{Temp: math.NaN()}, {TopP: math.Inf(1)}, {TopP: -0.1}, {MinP: -1}, {Temp: 1, MinP: math.NaN()}} {
		if _, err := New(p); !errors.Is(err, ErrParams) {
			t.Errorf("New(%+v): %v", p, err)
		}
	}
	s, err := New(DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range [][]float32{nil, {1, float32(math.NaN())}} {
		if _, err := s.Sample(l); !errors.Is(err, ErrLogits) {
			t.Errorf("Sample(%v): %v", l, err)
		}
	}
	if id, err := s.Sample([]float32{2, 1}); err != nil || id < 0 || id > 1 {
		t.Errorf("Sample after errors: %d, %v", id, err)
	}
}

// FuzzSample: any logits and parameters give an id inside the row or an
// error, never a panic.
func FuzzSample(f *testing.F) {
	f.Add(0.8, 40, 0.95, 0.05, uint64(1), []byte{1, 2, 3, 4, 200})
	f.Fuzz(func(t *testing.T, temp float64, k int, topP, minP float64, seed uint64, raw []byte) {
		logits := make([]float32, len(raw)/4)
		for i := range logits {
			logits[i] = math.Float32frombits(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24)
		}
		s, err := New(Params{Temp: temp, TopK: k, TopP: topP, MinP: minP, Seed: seed})
		if err != nil {
			return
		}
		id, err := s.Sample(logits)
		if err == nil && (id < 0 || int(id) >= len(logits)) {
			t.Fatalf("id %d outside %d logits", id, len(logits))
		}
	})
}
