package gallocr

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gogml/gogml/runtime"
)

// SVGOptions tune WriteSVG and WriteSVGs.
type SVGOptions struct {
	Title string
	// Width of the drawing area in pixels (default 1200).
	Width int
	// PanelHeight is the height of the largest chunk, over every plan
	// drawn, in pixels (default 420); other chunks are scaled alike.
	PanelHeight int
	// Legend is the number of largest blocks numbered in the drawing and
	// listed below it (default 12; negative: none).
	Legend int
}

// Layout of the drawing, in pixels.
const (
	svgLeft      = 96 // room for the offset axis labels
	svgRight     = 24
	svgTop       = 48
	svgPanelHead = 18 // a panel's caption
	svgAxisRoom  = 30 // the time axis under a panel
	svgPlanGap   = 26
	svgLegendRow = 14
	svgMinPanel  = 24 // the smallest panel height
	svgMinMark   = 1.0
)

// WriteSVG draws the plan's memory map: time (allocation events) across,
// offsets down, one rectangle per block from its allocation to its release
// (to the right edge when never released), one panel per chunk of each
// buffer type, with offset and time axes. Gaps between rectangles are
// fragmentation. It is WriteSVGs of one plan.
func (pl *Plan) WriteSVG(w io.Writer, bufts []runtime.BufferType, opt SVGOptions) error {
	return WriteSVGs(w, bufts, []*Plan{pl}, opt)
}

// WriteSVGs draws several plans of the same graph (such as the ggml and
// optimized strategies) one above the other on one byte scale and one
// time scale, so their sizes compare at a glance. Every block is at least
// a pixel wide and high; the largest blocks are numbered, the same number
// in every plan, and listed in a legend with their tensors; every block
// names its tensors in a tooltip. Names are escaped, control characters
// included, so any name gives well-formed XML.
func WriteSVGs(w io.Writer, bufts []runtime.BufferType, plans []*Plan, opt SVGOptions) error {
	if len(plans) == 0 {
		return fmt.Errorf("svg: no plan to draw")
	}
	if opt.Width <= 0 {
		opt.Width = 1200
	}
	if opt.PanelHeight <= 0 {
		opt.PanelHeight = 420
	}
	if opt.Legend == 0 {
		opt.Legend = 12
	}
	type panel struct {
		plan, dyn, chunk int
		size             uint64
		name             string
		height           float64
	}
	var panels []panel
	var tallest uint64
	events := 1
	for k, pl := range plans {
		if len(pl.FirstOf) > len(bufts) || len(pl.Chunks) > len(bufts) {
			return fmt.Errorf("svg: plan %d has %d buffers, %d buffer types given", k, len(pl.Chunks), len(bufts))
		}
		events = max(events, pl.Events)
		for d, first := range pl.FirstOf {
			for c, size := range pl.Chunks[first] {
				panels = append(panels, panel{plan: k, dyn: d, chunk: c, size: size,
					name: fmt.Sprintf("%s (buffer %d) chunk %d: %s", bufts[first].Name(), first, c, runtime.FormatBytes(size))})
				tallest = max(tallest, size)
			}
		}
	}
	tallest = max(tallest, 1)
	pxPerByte := float64(opt.PanelHeight) / float64(tallest)
	legend := largestBlocks(plans[0], max(opt.Legend, 0))
	number := map[int]int{}
	for i, b := range legend {
		number[b] = i + 1
	}

	// Heights first, so the SVG knows its size.
	total := float64(svgTop)
	for i := range panels {
		panels[i].height = max(svgMinPanel, float64(panels[i].size)*pxPerByte)
	}
	for k := range plans {
		total += svgPanelHead + 4
		for _, p := range panels {
			if p.plan == k {
				total += svgPanelHead + p.height + svgAxisRoom
			}
		}
		total += svgPlanGap
	}
	legendTop := total
	total += float64(svgLegendRow * (len(legend) + 2))
	width := svgLeft + opt.Width + svgRight

	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="10">`+"\n",
		width, int(math.Ceil(total)), width, int(math.Ceil(total)))
	fmt.Fprintf(bw, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	title := opt.Title
	if title == "" {
		title = "memory plan"
	}
	fmt.Fprintf(bw, `<text x="%d" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", svgLeft, xmlText(title))
	fmt.Fprintf(bw, `<text x="%d" y="36" font-size="11" fill="#444">time: allocation events across; offset in the buffer down; one rectangle per block, from its allocation to its release; white space is fragmentation; %s</text>`+"\n",
		svgLeft, scaleNote(len(plans)))
	xOf := func(e int) float64 { return svgLeft + float64(e)*float64(opt.Width)/float64(events) }
	y := float64(svgTop)
	for k, pl := range plans {
		bound := uint64(0)
		for _, b := range pl.LowerBound() {
			bound = satAdd(bound, b)
		}
		head := fmt.Sprintf("%s strategy: %s in all", pl.Strategy, sizeText(pl.TotalSize()))
		if bound > 0 && bound != math.MaxUint64 && pl.TotalSize() != math.MaxUint64 {
			head += fmt.Sprintf(" (%.3f × the live-bytes lower bound, %s)", float64(pl.TotalSize())/float64(bound), runtime.FormatBytes(bound))
		}
		fmt.Fprintf(bw, `<text x="%d" y="%.1f" font-size="13" font-weight="bold">%s</text>`+"\n", svgLeft, y+14, xmlText(head))
		y += svgPanelHead + 4
		for _, p := range panels {
			if p.plan != k {
				continue
			}
			fmt.Fprintf(bw, `<text x="%d" y="%.1f" font-size="11">%s</text>`+"\n", svgLeft, y+12, xmlText(p.name))
			y += svgPanelHead
			writePanel(bw, pl, p.dyn, p.chunk, p.size, y, p.height, opt.Width, events, xOf, number)
			y += p.height + svgAxisRoom
		}
		y += svgPlanGap
	}
	if len(legend) > 0 {
		ly := legendTop + svgLegendRow
		fmt.Fprintf(bw, `<text x="%d" y="%.1f" font-size="11" font-weight="bold">The %d largest blocks (numbered in the drawing):</text>`+"\n", svgLeft, ly, len(legend))
		pl := plans[0]
		for i, b := range legend {
			ly += svgLegendRow
			blk := pl.Blocks[b]
			end := "never freed"
			if blk.Freed >= 0 {
				end = fmt.Sprintf("freed at event %d", blk.Freed)
			}
			text := fmt.Sprintf("%d. %s — %s, allocated at event %d, %s", i+1, blockLabel(pl, b, 160), runtime.FormatBytes(blk.Size), blk.Alloc, end)
			fmt.Fprintf(bw, `<text x="%d" y="%.1f">%s</text>`+"\n", svgLeft+8, ly, xmlText(text))
		}
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}

func scaleNote(n int) string {
	if n > 1 {
		return "both plans share one byte scale and one time scale"
	}
	return "panels share one byte scale"
}

func sizeText(n uint64) string {
	if n == math.MaxUint64 {
		return "≥ 16 EiB"
	}
	return runtime.FormatBytes(n)
}

// writePanel draws one chunk: its frame, the offset axis on the left, the
// time axis below, and its blocks.
func writePanel(bw *bufio.Writer, pl *Plan, dyn, chunk int, size uint64, y, h float64, width, events int, xOf func(int) float64, number map[int]int) {
	fmt.Fprintf(bw, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="#f6f6f6" stroke="#888"/>`+"\n", svgLeft, y, width, h)
	// Offset axis: a tick every power-of-two step, about six of them and
	// at least 14 pixels apart.
	scale := h / float64(max(size, 1))
	if size > 0 {
		minStep := max(size/6, uint64(math.Min(14/scale, 1<<62)))
		step := uint64(1)
		for step < minStep && step < 1<<62 {
			step <<= 1
		}
		for off := uint64(0); off <= size; off += step {
			ty := y + float64(off)*scale
			fmt.Fprintf(bw, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#888"/>`+"\n", svgLeft-4, ty, svgLeft, ty)
			fmt.Fprintf(bw, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", svgLeft-6, ty+3.5, runtime.FormatBytes(off))
			if off > math.MaxUint64-step {
				break
			}
		}
	}
	// Time axis: ticks at 1, 2 or 5 times a power of ten, about ten of them.
	step := niceStep(events, 10)
	for e := 0; e <= events; e += step {
		x := xOf(e)
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/>`+"\n", x, y+h, x, y+h+4)
		fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" text-anchor="middle">%d</text>`+"\n", x, y+h+14, e)
	}
	fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" text-anchor="end" fill="#444">event →</text>`+"\n", float64(svgLeft+width), y+h+26)
	for bi, b := range pl.Blocks {
		if b.Dyn != dyn || b.At.Chunk != chunk {
			continue
		}
		end := b.Freed
		if end < 0 {
			end = events
		}
		x0, x1 := xOf(b.Alloc), xOf(end)
		rw := max(x1-x0, svgMinMark)
		ry := y + float64(b.At.Offset)*scale
		rh := max(float64(b.Size)*scale, svgMinMark)
		hue := (bi * 137) % 360
		fmt.Fprintf(bw, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="hsl(%d,60%%,70%%)" stroke="hsl(%d,50%%,40%%)" stroke-width="0.4"><title>%s</title></rect>`+"\n",
			x0, ry, rw, rh, hue, hue, xmlText(fmt.Sprintf("%s: %s at offset %d, events %d..%d", blockLabel(pl, bi, 400), runtime.FormatBytes(b.Size), b.At.Offset, b.Alloc, end)))
		// A label only where it fits inside the rectangle: the legend
		// number of a large block, else its tensor names, cut to fit.
		if rh < 9 {
			continue
		}
		label := ""
		if n, ok := number[bi]; ok {
			label = fmt.Sprintf("%d", n)
			if fit := int((rw - 4) / 5.5); fit >= 12 {
				label = fmt.Sprintf("%d: %s", n, blockLabel(pl, bi, fit-len(label)-2))
			}
		} else if fit := int((rw - 4) / 5.5); fit >= 6 {
			label = blockLabel(pl, bi, fit)
		}
		switch n, numbered := number[bi]; {
		case label != "" && float64(len([]rune(label)))*5.5+4 <= rw+0.5:
			fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" font-size="9">%s</text>`+"\n", x0+2, ry+min(rh-1.5, 10), xmlText(label))
		case numbered:
			// Too narrow for its number: centre it on the block, haloed.
			fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" font-size="9" text-anchor="middle" stroke="white" stroke-width="2" paint-order="stroke">%d</text>`+"\n",
				x0+rw/2, ry+min(rh-1.5, 10), n)
		}
	}
}

// niceStep returns the smallest of 1, 2 or 5 times a power of ten that
// cuts span into at most about ticks steps.
func niceStep(span, ticks int) int {
	want := max(span/ticks, 1)
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if p*m >= want {
				return p * m
			}
		}
		if p > math.MaxInt/100 {
			return p
		}
	}
}

// blockLabel names a block's tensors ("a → b" for a tensor computed in
// place of its parent), cut to at most n runes.
func blockLabel(pl *Plan, b, n int) string {
	ids := pl.BlockTensors(b)
	names := make([]string, 0, min(len(ids), 8))
	for _, id := range ids[:min(len(ids), 8)] {
		names = append(names, pl.Index.Tensors[id].Name)
	}
	s := strings.Join(names, " → ")
	if len(ids) > 8 {
		s += fmt.Sprintf(" → … (%d tensors)", len(ids))
	}
	return truncate(s, n)
}

// largestBlocks returns the indices of the n largest blocks, largest first
// (earlier blocks first among equals).
func largestBlocks(pl *Plan, n int) []int {
	idx := make([]int, len(pl.Blocks))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		sa, sb := pl.Blocks[a].Size, pl.Blocks[b].Size
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	return idx[:min(n, len(idx))]
}

// truncate shortens s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if n < 4 {
		return ""
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// xmlText escapes s for XML character data and attribute values. Runes
// XML 1.0 does not allow at all (control characters but tab, newline and
// carriage return; U+FFFE, U+FFFF; invalid UTF-8) are written visibly as
// \xHH or \uHHHH instead.
func xmlText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == '\t' || r == '\n' || r == '\r':
			fmt.Fprintf(&b, "&#%d;", r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0xfffe || r == 0xffff || r >= 0xd800 && r < 0xe000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}
