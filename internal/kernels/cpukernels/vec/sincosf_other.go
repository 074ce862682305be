//go:build !amd64 || purego

package vec

func sincosfVec(sin, cos, x []float32) int { return 0 }
