package cpu

// SplitEverything makes b hand every node to all its workers, however
// small, so that tests exercise row splitting (and empty shares).
func SplitEverything(b *Backend) { b.minWork = 1 }

// StageRoundedUpTo makes b round MUL_MAT activations a block at a time
// (mulMatRoundedBlocked) when they take more than n bytes as float32.
func StageRoundedUpTo(b *Backend, n int64) { b.roundStage = n }
