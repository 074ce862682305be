//go:build !amd64 || purego

package vec

func dotQ4_KBest(w, y []byte, nb int) float32 { return dotQ4_K(w, y, nb) }

func dotQ6_KBest(w, y []byte, nb int) float32 { return dotQ6_K(w, y, nb) }

func dotQ5_KBest(w, y []byte, nb int) float32 { return dotQ5_K(w, y, nb) }
