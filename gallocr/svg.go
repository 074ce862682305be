package gallocr

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/gogml/gogml/runtime"
)

// SVGOptions tune WriteSVG.
type SVGOptions struct {
	Title string
	// Width of the drawing area in pixels (default 1200).
	Width int
	// PanelHeight is the height of the tallest chunk panel (default 480).
	PanelHeight int
}

// WriteSVG draws the plan's memory map: time (allocation events) across,
// offsets down, one rectangle per block from its allocation to its release
// (to the right edge when never released), labelled with its tensors, one
// panel per chunk of each buffer type. Gaps between rectangles are
// fragmentation.
func (pl *Plan) WriteSVG(w io.Writer, bufts []runtime.BufferType, opt SVGOptions) error {
	if opt.Width <= 0 {
		opt.Width = 1200
	}
	if opt.PanelHeight <= 0 {
		opt.PanelHeight = 480
	}
	const left, top, gap = 90, 40, 46
	type panel struct {
		dyn, chunk int
		size       uint64
		name       string
	}
	var panels []panel
	var tallest uint64
	for d, first := range pl.FirstOf {
		for c, size := range pl.Chunks[first] {
			panels = append(panels, panel{d, c, size, fmt.Sprintf("%s (buffer %d) chunk %d: %s", bufts[first].Name(), first, c, runtime.FormatBytes(size))})
			tallest = max(tallest, size)
		}
	}
	if tallest == 0 {
		tallest = 1
	}
	events := max(pl.Events, 1)
	xOf := func(e int) float64 { return left + float64(e)*float64(opt.Width)/float64(events) }
	heights := make([]float64, len(panels))
	total := top
	for i, p := range panels {
		heights[i] = max(24, float64(opt.PanelHeight)*float64(p.size)/float64(tallest))
		total += int(heights[i]) + gap
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="10">`+"\n", left+opt.Width+20, total+20)
	fmt.Fprintf(bw, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	title := opt.Title
	if title == "" {
		title = "memory plan"
	}
	fmt.Fprintf(bw, `<text x="%d" y="20" font-size="14" font-weight="bold">%s — %s strategy, %s in all; time (allocation events) →, offset ↓</text>`+"\n",
		left, html.EscapeString(title), pl.Strategy, runtime.FormatBytes(pl.TotalSize()))
	y := float64(top)
	for i, p := range panels {
		h := heights[i]
		fmt.Fprintf(bw, `<text x="%d" y="%.1f" font-size="11">%s</text>`+"\n", left, y+12, html.EscapeString(p.name))
		y += 16
		fmt.Fprintf(bw, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="#f4f4f4" stroke="#888"/>`+"\n", left, y, opt.Width, h)
		fmt.Fprintf(bw, `<text x="%d" y="%.1f" text-anchor="end">0</text>`+"\n", left-4, y+8)
		fmt.Fprintf(bw, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-4, y+h, runtime.FormatBytes(p.size))
		scale := h / float64(max(p.size, 1))
		for bi, b := range pl.Blocks {
			if b.Dyn != p.dyn || b.At.Chunk != p.chunk {
				continue
			}
			end := b.Freed
			if end < 0 {
				end = events
			}
			x0, x1 := xOf(b.Alloc), xOf(end)
			ry := y + float64(b.At.Offset)*scale
			rh := max(float64(b.Size)*scale, 0.8)
			names := make([]string, 0, b.Count)
			for _, id := range pl.BlockTensors(bi) {
				names = append(names, pl.Index.Tensors[id].Name)
			}
			label := strings.Join(names, " → ")
			hue := (bi * 137) % 360
			fmt.Fprintf(bw, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="hsl(%d,60%%,70%%)" stroke="hsl(%d,50%%,40%%)" stroke-width="0.5"><title>%s: %s at %d, events %d..%d</title></rect>`+"\n",
				x0, ry, max(x1-x0, 0.8), rh, hue, hue, html.EscapeString(label), runtime.FormatBytes(b.Size), b.At.Offset, b.Alloc, end)
			if rh >= 9 && x1-x0 >= 40 {
				fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" font-size="8" clip-path="none">%s</text>`+"\n", x0+2, ry+min(rh-1, 9), html.EscapeString(truncate(label, int((x1-x0)/4.5))))
			}
		}
		y += h + gap - 16
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
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
