//go:build !amd64 || purego

package vec

const hwLevel = levelGeneric

const cpuLevel = levelGeneric

func fmaChunkLevel(_, n int) float64 { return fmaChunk(n) }

func f32ToF16(_ []uint16, _ []float32) int { return 0 }

func f16ToF32(_ []float32, _ []uint16) int { return 0 }

func dequantQ8_0(_ []float32, _ []byte) int { return 0 }
