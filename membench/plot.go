package membench

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot draws bandwidth against size on log axes, one panel per target with
// one line per operation and the host copy as a thick black reference line
// in every panel, all panels on the same scales. The format is PNG or SVG,
// from path's extension.
func (rep *Report) Plot(path string) error {
	if err := CheckPlotPath(path); err != nil {
		return err
	}
	ext := strings.ToLower(filepath.Ext(path))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := rep.WritePlot(f, ext[1:]); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CheckPlotPath reports whether Plot accepts path's extension (.png or
// .svg), so that a caller can refuse a bad name before a long run.
func CheckPlotPath(path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("plot %q: want a .png or .svg file", path)
	}
	return nil
}

// WritePlot writes the plot of Plot to w in format "png" or "svg".
func (rep *Report) WritePlot(w io.Writer, format string) error {
	if len(rep.Targets) == 0 || len(rep.Sizes) == 0 {
		return fmt.Errorf("membench: nothing to plot")
	}
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, r := range rep.Results {
		if v := r.MedianGBps; isFinitePositive(v) {
			ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
		}
	}
	if !isFinitePositive(ymin) {
		return fmt.Errorf("membench: no bandwidth figures to plot")
	}
	// Whole decades, so the log ticks are labelled.
	ymin = math.Pow(10, math.Floor(math.Log10(ymin)))
	ymax = math.Pow(10, math.Ceil(math.Log10(ymax)))
	xmin, xmax := float64(rep.Sizes[0]), float64(rep.Sizes[len(rep.Sizes)-1])
	if xmax == xmin {
		xmin, xmax = xmin/2, xmax*2
	}

	ops := rep.bandwidthOps()
	rows := make([][]*plot.Plot, len(rep.Targets))
	for i, ti := range rep.Targets {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s: bandwidth by size (median of %d, %s)", ti.Name, rep.Config.Reps, rep.Host.CPU)
		p.X.Label.Text = "size"
		p.Y.Label.Text = "GB/s"
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker = sizeTicks{last: xmax}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		// Room on the right, past the largest size, for the legend.
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax*legendRoom, ymin, ymax
		p.Add(plotter.NewGrid())
		p.Legend.Top, p.Legend.Left = false, false
		p.Legend.TextStyle.Font.Size = vg.Points(8)
		p.Legend.ThumbnailWidth = vg.Points(24)
		p.Legend.XOffs = vg.Points(4)

		ref, err := rep.line(HostTarget, OpHostCopy)
		if err != nil {
			return err
		}
		if ref != nil {
			ref.Color = color.Black
			ref.Width = vg.Points(3)
			p.Add(ref)
			p.Legend.Add("host copy (reference)", ref)
		}
		for _, op := range ti.Ops {
			if !IsBandwidth(op) {
				continue
			}
			l, err := rep.line(ti.Name, op)
			if err != nil {
				return err
			}
			if l == nil {
				continue
			}
			k := slices.Index(ops, op)
			l.Color = plotutil.Color(k)
			l.Dashes = plotutil.Dashes(k / 7)
			l.Width = vg.Points(1.5)
			s, err := rep.points(ti.Name, op)
			if err != nil {
				return err
			}
			s.GlyphStyle.Color = l.Color
			s.GlyphStyle.Shape = plotutil.Shape(k)
			s.GlyphStyle.Radius = vg.Points(2)
			p.Add(l, s)
			p.Legend.Add(op, l, s)
		}
		rows[i] = []*plot.Plot{p}
	}

	width, height := 9*vg.Inch, vg.Length(len(rows))*4*vg.Inch
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch format {
	case "png":
		img := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(110))
		c = vgimg.PngCanvas{Canvas: img}
	case "svg":
		c = vgsvg.New(width, height)
	default:
		return fmt.Errorf("membench: plot format %q: want png or svg", format)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	tiles := draw.Tiles{Rows: len(rows), Cols: 1, PadX: vg.Points(10), PadY: vg.Points(14), PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(10)}
	canvases := plot.Align(rows, tiles, dc)
	for i := range rows {
		rows[i][0].Draw(canvases[i][0])
	}
	_, err := c.WriteTo(w)
	return err
}

// bandwidthOps lists every bandwidth operation in the report in order of
// first appearance, so an operation has the same colour in every panel.
func (rep *Report) bandwidthOps() []string {
	var ops []string
	for _, ti := range rep.Targets {
		for _, op := range ti.Ops {
			if IsBandwidth(op) && slices.Index(ops, op) < 0 {
				ops = append(ops, op)
			}
		}
	}
	return ops
}

// xys returns the (size, median GB/s) points of op on target.
func (rep *Report) xys(target, op string) plotter.XYs {
	var pts plotter.XYs
	for _, n := range rep.Sizes {
		r, ok := rep.Find(target, op, n)
		if ok && isFinitePositive(r.MedianGBps) {
			pts = append(pts, plotter.XY{X: float64(n), Y: r.MedianGBps})
		}
	}
	return pts
}

func (rep *Report) line(target, op string) (*plotter.Line, error) {
	pts := rep.xys(target, op)
	if len(pts) == 0 {
		return nil, nil
	}
	return plotter.NewLine(pts)
}

func (rep *Report) points(target, op string) (*plotter.Scatter, error) {
	return plotter.NewScatter(rep.xys(target, op))
}

// legendRoom widens the size axis past the largest size, as a factor, to
// leave room for the legend.
const legendRoom = 24

// sizeTicks labels powers of four with binary sizes and marks the other
// powers of two up to last as minor ticks.
type sizeTicks struct{ last float64 }

// Ticks returns the ticks between min and max.
func (st sizeTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := 0; e < 63; e++ {
		v := math.Ldexp(1, e)
		if v < min || v > max || v > st.last {
			continue
		}
		t := plot.Tick{Value: v}
		if e%2 == 0 {
			t.Label = strings.ReplaceAll(FormatSize(uint64(v)), " ", "")
		}
		ticks = append(ticks, t)
	}
	return ticks
}
