package cpu

// SplitEverything makes b hand every node to all its workers, however
// small, so that tests exercise row splitting (and empty shares).
func SplitEverything(b *Backend) { b.minWork = 1 }
