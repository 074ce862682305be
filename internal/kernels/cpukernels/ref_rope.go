package cpukernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// ropeModeOK checks ROPE's mode, sections (op parameters 11..14) and
// offset (15) as ggml's CPU kernel asserts them, returning why not or "".
func ropeModeOK(t *runtime.Tensor) string {
	nDims, mode, nOffs := t.OpParamI32(1), t.OpParamI32(2), t.OpParamI32(15)
	switch mode {
	case runtime.RopeNormal, runtime.RopeNeoX, runtime.RopeMrope, runtime.RopeVision, runtime.RopeImrope:
	default:
		return fmt.Sprintf("rope mode %d", mode)
	}
	if nOffs < 0 || nOffs%2 != 0 || int64(nOffs)+int64(nDims) > t.Ne[0] {
		return fmt.Sprintf("rope offset %d with n_dims %d and ne[0] %d", nOffs, nDims, t.Ne[0])
	}
	if mode == runtime.RopeVision && (int64(nDims) != t.Ne[0]/2 || nOffs != 0) {
		return "vision rope needs n_dims == ne[0]/2 and no offset"
	}
	if mode&runtime.RopeMrope != 0 {
		var sum int64
		for i := 11; i < 15; i++ {
			s := t.OpParamI32(i)
			if s < 0 {
				return "negative rope section"
			}
			sum += int64(s)
		}
		if t.OpParamI32(11) <= 0 && t.OpParamI32(12) <= 0 && t.OpParamI32(13) <= 0 {
			return "multi-section rope with no section"
		}
		if sum > t.Ne[0] {
			return "rope sections sum past ne[0]"
		}
	}
	return ""
}

// RopeShapeOK checks what a GPU rope kernel relies on in ROPE or
// ROPE_BACK node t, returning why not or "": what ggml's CPU kernel
// asserts (ropeModeOK: the mode, the offset, vision's n_dims, the
// sections), n_dims even and within an even row, sections summing to at
// least 1, positions for every index of dimension 2 (four groups for the
// multi-section modes), and f32 frequency factors for every rotated pair.
func RopeShapeOK(t *runtime.Tensor) string {
	if why := ropeModeOK(t); why != "" {
		return why
	}
	nDims, mode := t.OpParamI32(1), t.OpParamI32(2)
	if nDims <= 0 || nDims%2 != 0 || int64(nDims) > t.Ne[0] || t.Ne[0]%2 != 0 {
		return fmt.Sprintf("n_dims %d with ne[0] %d", nDims, t.Ne[0])
	}
	pairs := int64(nDims / 2) // rotation pairs of a row
	npos := t.Ne[2]
	if mode&runtime.RopeMrope != 0 {
		npos *= 4
		if t.OpParamI32(11)+t.OpParamI32(12)+t.OpParamI32(13)+t.OpParamI32(14) <= 0 {
			return "rope sections must sum to at least 1"
		}
		if mode == runtime.RopeVision {
			pairs = int64(nDims)
		}
	}
	if p := t.Src[1]; p == nil || p.Ne[0] < npos {
		return fmt.Sprintf("positions: want %d i32", npos)
	}
	if f := t.Src[2]; f != nil && (f.Type != runtime.TypeF32 || f.Ne[0] < pairs) {
		return fmt.Sprintf("freq factors must be f32 with %d elements", pairs)
	}
	return ""
}

// RopeCorrDims returns YaRN's correction range [low, high] of rotary
// dimensions, as ggml computes it.
func RopeCorrDims(nDims, nCtxOrig int32, freqBase, betaFast, betaSlow float32) (lo, hi float32) {
	dim := func(nRot float32) float32 {
		return float32(nDims) * float32(math.Log(float64(float32(nCtxOrig)/(nRot*2*math.Pi)))) / (2 * float32(math.Log(float64(freqBase))))
	}
	start := float32(math.Floor(float64(dim(betaFast))))
	end := float32(math.Ceil(float64(dim(betaSlow))))
	return max(0, start), min(float32(nDims-1), end)
}

// ropeYarn returns the scaled cosine and sine of rotation pair i0/2 with
// unscaled angle thetaExtrap (ggml's rope_yarn).
func ropeYarn(thetaExtrap, freqScale, lo, hi float32, i0 int, extFactor, mscale float32) (cos, sin float32) {
	theta, mscale := ropeYarnAngle(thetaExtrap, freqScale, lo, hi, i0, extFactor, mscale)
	sin, cos = Sincosf(theta)
	return cos * mscale, sin * mscale
}

// ropeYarnAngle returns rope_yarn's angle and scale of rotation pair
// i0/2: its cosine and sine times the scale are the pair's cache.
func ropeYarnAngle(thetaExtrap, freqScale, lo, hi float32, i0 int, extFactor, mscale float32) (theta, scale float32) {
	thetaInterp := freqScale * thetaExtrap
	theta = thetaInterp
	if extFactor != 0 {
		y := (float32(i0/2) - lo) / max(0.001, hi-lo)
		rampMix := (1 - min(1, max(0, y))) * extFactor
		theta = thetaInterp*(1-rampMix) + thetaExtrap*rampMix
		mscale *= 1 + 0.1*float32(math.Log(float64(1/freqScale)))
	}
	return theta, mscale
}

// RopeAngles fills theta[k] and scale[k] with the angle and scale of
// rotation pair k of a row at position pos (no frequency factors), as
// RopeCache computes them: RopeCache's pair k is (cos·scale, sin·scale)
// of Sincosf(theta[k]), which callers may compute many at a time.
func RopeAngles(theta, scale []float32, pos, freqScale, extFactor, attnFactor, lo, hi, thetaScale float32) {
	scale = scale[:len(theta)]
	th := pos
	if extFactor == 0 { // ropeYarnAngle's angle is freqScale·th, its scale attnFactor
		for k := range theta {
			theta[k], scale[k] = freqScale*th, attnFactor
			th *= thetaScale
		}
		return
	}
	for k := range theta {
		theta[k], scale[k] = ropeYarnAngle(th, freqScale, lo, hi, 2*k, extFactor, attnFactor)
		th *= thetaScale
	}
}

// RopeThetaScale returns the ratio of successive pairs' angles,
// freqBase^(-2/nDims) with the exponent rounded to float32 (ggml's
// powf(freq_base, -2.0f/n_dims)).
func RopeThetaScale(freqBase float32, nDims int32) float32 {
	return float32(math.Pow(float64(freqBase), float64(-2/float32(nDims))))
}

// RopeCache fills cache with (cos, sin) pairs for one position, for the
// ne0/2 rotation pairs of a row: cache[2k], cache[2k+1] for pair k. sinSign
// is 1 for ROPE and -1 for ROPE_BACK. freqFactors may be nil.
func RopeCache(cache []float32, pos float32, nDims int32, freqScale, extFactor, attnFactor float32,
	lo, hi float32, thetaScale float32, freqFactors []float32, sinSign float32) {
	theta := pos
	for i0 := 0; i0+1 < len(cache); i0 += 2 {
		ff := float32(1)
		if freqFactors != nil && i0/2 < len(freqFactors) {
			ff = freqFactors[i0/2]
		}
		c, s := ropeYarn(theta/ff, freqScale, lo, hi, i0, extFactor, attnFactor)
		cache[i0], cache[i0+1] = c, s*sinSign
		theta *= thetaScale
	}
}

// mropeCache is RopeCache for the multi-section modes (ggml's
// ggml_mrope_cache_init): pos holds the time, height, width and extra
// positions; each pair takes its angle from one of them by section
// (interleaved for imrope), and vision restarts each section's angle.
func mropeCache(cache []float32, pos [4]float32, sections [4]int, imrope, vision bool, freqScale, extFactor, attnFactor,
	lo, hi, thetaScale float32, freqFactors []float32, sinSign float32) {
	th := pos
	sectDims := sections[0] + sections[1] + sections[2] + sections[3]
	secW := sections[1] + sections[0]
	secE := sections[2] + secW
	for i0 := 0; i0+1 < len(cache); i0 += 2 {
		ff := float32(1)
		if freqFactors != nil && i0/2 < len(freqFactors) {
			ff = freqFactors[i0/2]
		}
		sector := (i0 / 2) % sectDims
		if vision {
			switch sector {
			case 0:
				th[0] = pos[0]
			case sections[0]:
				th[1] = pos[1]
			case secW:
				th[2] = pos[2]
			case secE:
				th[3] = pos[3]
			}
		}
		theta := th[0]
		if imrope {
			switch {
			case sector%3 == 1 && sector < 3*sections[1]:
				theta = th[1]
			case sector%3 == 2 && sector < 3*sections[2]:
				theta = th[2]
			case sector%3 == 0 && sector < 3*sections[0]:
				theta = th[0]
			default:
				theta = th[3]
			}
		} else {
			switch {
			case sector >= sections[0] && sector < secW:
				theta = th[1]
			case sector >= secW && sector < secW+sections[2]:
				theta = th[2]
			case sector >= secW+sections[2]:
				theta = th[3]
			}
		}
		c, s := ropeYarn(theta/ff, freqScale, lo, hi, i0, extFactor, attnFactor)
		cache[i0], cache[i0+1] = c, s*sinSign
		for j := range th {
			th[j] *= thetaScale
		}
	}
}

// rope rotates n_dims elements of each row (from op parameter 15's
// offset) by its position's angles: normal mode adjacent pairs, NeoX and
// the multi-section modes pairs n_dims/2 apart, vision pairs n_dims apart
// over the whole row; the other elements are copied.
func (k *kernel) rope(r0, r1 int64) {
	t, s, p := k.t, k.t.Src[0], k.t.Src[1]
	nDims, mode, nCtxOrig := t.OpParamI32(1), t.OpParamI32(2), t.OpParamI32(4)
	freqBase, freqScale := t.OpParamF32(5), t.OpParamF32(6)
	extFactor, attnFactor := t.OpParamF32(7), t.OpParamF32(8)
	betaFast, betaSlow := t.OpParamF32(9), t.OpParamF32(10)
	sections := [4]int{int(t.OpParamI32(11)), int(t.OpParamI32(12)), int(t.OpParamI32(13)), int(t.OpParamI32(14))}
	nOffs := int(t.OpParamI32(15))
	multi := mode&runtime.RopeMrope != 0
	lo, hi := RopeCorrDims(nDims, nCtxOrig, freqBase, betaFast, betaSlow)
	thetaScale := RopeThetaScale(freqBase, nDims)
	var ff []float32
	if f := t.Src[2]; f != nil {
		ff = make([]float32, f.Ne[0])
		for i := range ff {
			ff[i] = loadF(f.Type, k.src[2], uint64(i)*f.Nb[0])
		}
	}
	sinSign := float32(1)
	if t.Op == runtime.OpRopeBack {
		sinSign = -1
	}
	posAt := func(i int64) float32 {
		return float32(int32(binary.LittleEndian.Uint32(k.src[1][uint64(i)*p.Nb[0]:])))
	}
	cache := make([]float32, t.Ne[0])
	row := make([]float32, t.Ne[0])
	lastPos := int64(-1)
	nd := int(nDims)
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		if i2 != lastPos {
			if !multi {
				RopeCache(cache, posAt(i2), nDims, freqScale, extFactor, attnFactor, lo, hi, thetaScale, ff, sinSign)
			} else {
				ne2 := t.Ne[2]
				pos := [4]float32{posAt(i2), posAt(i2 + ne2), posAt(i2 + 2*ne2), posAt(i2 + 3*ne2)}
				mropeCache(cache, pos, sections, mode == runtime.RopeImrope, mode == runtime.RopeVision,
					freqScale, extFactor, attnFactor, lo, hi, thetaScale, ff, sinSign)
			}
			lastPos = i2
		}
		loadRow(s, k.src[0], i1, i2, i3, row)
		n, half := nd, 0
		switch mode {
		case runtime.RopeNormal:
			half = 1
		case runtime.RopeVision:
			n, half = len(row), nd
		default:
			half = nd / 2
		}
		for i0 := 0; i0 < n; i0 += 2 {
			c, sn := cache[i0], cache[i0+1]
			j0 := nOffs + i0/2
			if mode == runtime.RopeNormal {
				j0 = nOffs + i0
			}
			j1 := j0 + half
			x0, x1 := row[j0], row[j1]
			row[j0] = float32(x0*c) - float32(x1*sn)
			row[j1] = float32(x0*sn) + float32(x1*c)
		}
		k.storeRow(row, off3(t.Nb, i1, i2, i3))
	}
}
