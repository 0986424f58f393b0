// Package plots draws training curves as PNG images with gonum/plot, so
// executed notebooks keep them as static image/png outputs that any viewer
// shows.
package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/gosqlenv/gosqlenv/training"
)

// palette holds distinguishable line colours.
var palette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
}

// LearningCurves renders a 2×2 figure from GRPO metrics records: reward mean
// ± std with each reward function's mean; loss; KL (or entropy when there is
// no reference model); completion length. It returns PNG bytes.
func LearningCurves(records []training.Metrics) ([]byte, error) {
	if len(records) == 0 {
		return nil, fmt.Errorf("plots: no metrics records")
	}
	steps := training.Series(records, "step")
	var rewardFns []string
	for _, k := range training.Keys(records) {
		if strings.HasPrefix(k, "rewards/") && strings.HasSuffix(k, "/mean") {
			rewardFns = append(rewardFns, k)
		}
	}
	sort.Strings(rewardFns)
	panels := [4]*plot.Plot{}
	var err error
	if panels[0], err = rewardPanel(records, steps, rewardFns); err != nil {
		return nil, err
	}
	second := "kl"
	if allNaN(training.Series(records, "kl")) {
		second = "entropy"
	}
	for i, spec := range []struct{ key, title string }{{"loss", "Loss"}, {second, strings.ToUpper(second[:1]) + second[1:]},
		{"completions/mean_length", "Completion length (tokens per episode)"}} {
		if panels[i+1], err = linePanel(spec.title, steps, map[string][]float64{spec.key: training.Series(records, spec.key)}); err != nil {
			return nil, err
		}
	}
	const w, h = 10 * vg.Inch, 7 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 2, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	grid := [][]*plot.Plot{{panels[0], panels[1]}, {panels[2], panels[3]}}
	canvases := plot.Align(grid, tiles, dc)
	for r := range grid {
		for c := range grid[r] {
			grid[r][c].Draw(canvases[r][c])
		}
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plots: encode PNG: %w", err)
	}
	return buf.Bytes(), nil
}

func rewardPanel(records []training.Metrics, steps []float64, rewardFns []string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Reward (mean ± std over episodes)"
	p.X.Label.Text = "step"
	mean, std := training.Series(records, "reward"), training.Series(records, "reward_std")
	band := make(plotter.XYs, 0, 2*len(steps))
	for i := range steps {
		band = append(band, plotter.XY{X: steps[i], Y: mean[i] + zeroIfNaN(std[i])})
	}
	for i := len(steps) - 1; i >= 0; i-- {
		band = append(band, plotter.XY{X: steps[i], Y: mean[i] - zeroIfNaN(std[i])})
	}
	poly, err := plotter.NewPolygon(band)
	if err != nil {
		return nil, err
	}
	poly.Color = color.NRGBA{R: 31, G: 119, B: 180, A: 50} // not premultiplied: a light blue band
	poly.LineStyle.Color = color.Transparent
	poly.LineStyle.Width = 0
	p.Add(poly)
	series := map[string][]float64{"reward": mean}
	for _, k := range rewardFns {
		series[strings.TrimSuffix(strings.TrimPrefix(k, "rewards/"), "/mean")] = training.Series(records, k)
	}
	if err := addLines(p, steps, series); err != nil {
		return nil, err
	}
	return p, nil
}

func linePanel(title string, steps []float64, series map[string][]float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "step"
	return p, addLines(p, steps, series)
}

func addLines(p *plot.Plot, steps []float64, series map[string][]float64) error {
	names := make([]string, 0, len(series))
	for n := range series {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] == "reward" || (names[j] != "reward" && names[i] < names[j]) })
	for i, n := range names {
		var pts plotter.XYs
		for k, v := range series[n] {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				pts = append(pts, plotter.XY{X: steps[k], Y: v})
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, scatter, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color, scatter.Color = palette[i%len(palette)], palette[i%len(palette)]
		line.Width = vg.Points(1.5)
		scatter.Radius = vg.Points(2)
		p.Add(line, scatter)
		if len(series) > 1 {
			p.Legend.Add(n, line)
		}
	}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return nil
}

func zeroIfNaN(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

func allNaN(x []float64) bool {
	for _, v := range x {
		if !math.IsNaN(v) {
			return false
		}
	}
	return true
}

// Lines renders one panel with the given metrics over steps (e.g. the SFT
// loss). It returns PNG bytes.
func Lines(title string, records []training.Metrics, keys ...string) ([]byte, error) {
	if len(records) == 0 {
		return nil, fmt.Errorf("plots: no metrics records")
	}
	series := map[string][]float64{}
	for _, k := range keys {
		series[k] = training.Series(records, k)
	}
	p, err := linePanel(title, training.Series(records, "step"), series)
	if err != nil {
		return nil, err
	}
	img := vgimg.New(7*vg.Inch, 3.5*vg.Inch)
	p.Draw(draw.New(img))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plots: encode PNG: %w", err)
	}
	return buf.Bytes(), nil
}

// greedyCurve is one split's greedy success (%) during GRPO: the SFT
// evaluation's at step 0, the periodic evaluations' (eval/<split>/
// greedy_success) at their steps, and the final GRPO evaluation's at the
// last step when no periodic evaluation ran there (a trainer told that a
// full evaluation follows skips it: GRPOTrainer.EvaluatedAfter).
func greedyCurve(records []training.Metrics, summary training.EvalSummary, split string) plotter.XYs {
	var pts plotter.XYs
	if r, ok := summary[split][training.PolicySFT]; ok {
		pts = append(pts, plotter.XY{X: 0, Y: 100 * r.GreedySuccess})
	}
	key := "eval/" + split + "/greedy_success"
	for _, m := range records {
		if v, ok := m[key]; ok {
			pts = append(pts, plotter.XY{X: m["step"], Y: 100 * v})
		}
	}
	if len(records) > 0 {
		last := records[len(records)-1]
		if _, evaluated := last[key]; !evaluated {
			if r, ok := summary[split][training.PolicyGRPO]; ok {
				pts = append(pts, plotter.XY{X: last["step"], Y: 100 * r.GreedySuccess})
			}
		}
	}
	return pts
}

// SuccessCurves renders a 1×2 figure of success rates per evaluation split:
// on the left the greedy success during GRPO (eval/<split>/greedy_success of
// the records; step 0 is the SFT model's evaluation in summary when
// present, and the last step the GRPO model's when no periodic evaluation
// ran there), on the right the sampled success ± one standard error of each
// policy of summary in training order (random → untrained → SFT → GRPO).
// It returns PNG bytes.
func SuccessCurves(records []training.Metrics, summary training.EvalSummary) ([]byte, error) {
	left := plot.New()
	left.Title.Text = "Greedy success during GRPO (%)"
	left.X.Label.Text = "GRPO step"
	for i, split := range training.Splits {
		if err := addSeries(left, split, greedyCurve(records, summary, split), i, nil); err != nil {
			return nil, err
		}
	}
	right := plot.New()
	right.Title.Text = "Sampled success by stage (%, ± 1 s.e.)"
	var stages []string
	for _, policy := range training.Policies {
		for _, split := range training.Splits {
			if _, ok := summary[split][policy]; ok {
				stages = append(stages, policy)
				break
			}
		}
	}
	for i, split := range training.Splits {
		var pts plotter.XYs
		var errs plotter.YErrors
		for x, policy := range stages {
			if r, ok := summary[split][policy]; ok {
				pts = append(pts, plotter.XY{X: float64(x), Y: 100 * r.SampledSuccess})
				errs = append(errs, struct{ Low, High float64 }{100 * r.SampledSuccessSE, 100 * r.SampledSuccessSE})
			}
		}
		if err := addSeries(right, split, pts, i, errs); err != nil {
			return nil, err
		}
	}
	right.NominalX(stages...)
	for _, p := range []*plot.Plot{left, right} {
		p.Y.Min, p.Y.Max = 0, 130 // the band above 100 % holds the legend
		p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 25, Label: "25"}, {Value: 50, Label: "50"}, {Value: 75, Label: "75"}, {Value: 100, Label: "100"}})
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
	}
	img := vgimg.New(11*vg.Inch, 4*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 6, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	grid := [][]*plot.Plot{{left, right}}
	canvases := plot.Align(grid, tiles, dc)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plots: encode PNG: %w", err)
	}
	return buf.Bytes(), nil
}

// addSeries adds one named line with points (and error bars when errs is
// not nil) in palette colour i; an empty series is skipped.
func addSeries(p *plot.Plot, name string, pts plotter.XYs, i int, errs plotter.YErrors) error {
	if len(pts) == 0 {
		return nil
	}
	line, scatter, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	c := palette[i%len(palette)]
	line.Color, scatter.Color = c, c
	line.Width = vg.Points(1.5)
	scatter.Radius = vg.Points(2.5)
	p.Add(line, scatter)
	if errs != nil {
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{pts, errs})
		if err != nil {
			return err
		}
		bars.Color = c
		p.Add(bars)
	}
	p.Legend.Add(name, line)
	return nil
}
