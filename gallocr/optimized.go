package gallocr

import "errors"

// optimizeBlocks reassigns the blocks' places for StrategyOptimized.
func optimizeBlocks(pl *Plan, dyns []*Dyn) error {
	return errors.New("optimized strategy not implemented yet")
}
