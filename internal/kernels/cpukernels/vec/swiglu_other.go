//go:build !amd64 || purego

package vec

func swiglu(dst, x, g []float32, _ bool) { swigluChunks(dst, x, g) }
