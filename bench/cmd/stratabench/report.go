package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Report is one experiment's output: tables (printed and saved as
// markdown) and charts (saved as PNG, linked from the markdown).
type Report struct {
	name, about string
	started     time.Time
	parts       []string // markdown, in order
	charts      []chart
}

type chart struct {
	file string
	p    *plot.Plot
	h    vg.Length // height; 0: the default
}

func newReport(name, about string) *Report {
	return &Report{name: name, about: about, started: time.Now()}
}

// Table is a titled table; cells are preformatted strings.
type Table struct {
	Title   string
	Note    string // a sentence under the table: setup, what the ratio means
	Columns []string
	Rows    [][]string
}

// AddRow appends a row, formatting each cell with %v (floats with %.4g).
func (t *Table) AddRow(cells ...any) {
	row := make([]string, len(cells))
	for i, c := range cells {
		switch v := c.(type) {
		case float64:
			row[i] = fmt.Sprintf("%.4g", v)
		default:
			row[i] = fmt.Sprint(v)
		}
	}
	t.Rows = append(t.Rows, row)
}

// Markdown renders the table.
func (t *Table) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", t.Title)
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(t.Columns, " | "), strings.Repeat("---|", len(t.Columns)))
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "| %s |\n", strings.Join(r, " | "))
	}
	if t.Note != "" {
		fmt.Fprintf(&b, "\n%s\n", t.Note)
	}
	return b.String()
}

// Table adds a table to the report.
func (r *Report) Table(t *Table) { r.parts = append(r.parts, t.Markdown()) }

// Text adds a paragraph.
func (r *Report) Text(format string, args ...any) {
	r.parts = append(r.parts, fmt.Sprintf(format, args...)+"\n")
}

// Series is one line of a line chart or one group of a bar chart.
type Series struct {
	Name   string
	X, Y   []float64 // X unused by bar charts
	Labels []string  // bar charts: the category of each Y
}

// LineChart adds a PNG line chart named <report>-<slug>.png.
func (r *Report) LineChart(slug, title, xLabel, yLabel string, logY bool, series ...Series) error {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	if logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	var args []any
	for _, s := range series {
		pts := make(plotter.XYs, len(s.X))
		for i := range s.X {
			pts[i].X, pts[i].Y = s.X[i], s.Y[i]
		}
		args = append(args, s.Name, pts)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	r.charts = append(r.charts, chart{file: r.name + "-" + slug + ".png", p: p})
	return nil
}

// BarChart adds a PNG grouped bar chart named <report>-<slug>.png; every
// series has one bar per label of the first series.
func (r *Report) BarChart(slug, title, yLabel string, series ...Series) error {
	p := plot.New()
	p.Title.Text = title
	var labels []string
	if len(series) > 0 {
		labels = series[0].Labels
	}
	// Many labels side by side overlap: then the bars lie horizontally, one
	// label per row, and the chart grows with them.
	horizontal := len(labels) > 8
	group := 60.0
	if horizontal {
		group = 16
	}
	w := vg.Points(group / float64(max(1, len(series))))
	for i, s := range series {
		bars, err := plotter.NewBarChart(plotter.Values(s.Y), w)
		if err != nil {
			return err
		}
		bars.Horizontal = horizontal
		bars.Color = plotutil.Color(i)
		bars.Offset = w * vg.Length(float64(i)-float64(len(series)-1)/2) // centred on the label
		if horizontal {
			bars.Offset = -bars.Offset // the first series on top
		}
		p.Add(bars)
		p.Legend.Add(s.Name, bars)
	}
	c := chart{file: r.name + "-" + slug + ".png", p: p}
	if horizontal {
		p.X.Label.Text = yLabel
		p.NominalY(labels...)
		p.Y.Min, p.Y.Max = -1, float64(len(labels))
		p.Y.Scale = reverseScale{} // the first label on top, as in the table
		c.h = max(4.5*vg.Inch, vg.Points(20*float64(len(labels))+90))
	} else {
		p.Y.Label.Text = yLabel
		p.NominalX(labels...)
	}
	p.Legend.Top = true
	r.charts = append(r.charts, c)
	return nil
}

// reverseScale is a linear axis scale running from max to min.
type reverseScale struct{}

func (reverseScale) Normalize(min, max, x float64) float64 { return (max - x) / (max - min) }

// Write prints the tables to w and saves <name>.md and the charts in dir;
// an empty dir saves nothing.
func (r *Report) Write(dir string, w io.Writer) error {
	var md strings.Builder
	charts := r.charts
	if dir == "" {
		charts = nil // nowhere to save them
	}
	fmt.Fprintf(&md, "## %s\n\n%s. Run %s, took %v.\n\n", r.name, r.about,
		r.started.UTC().Format("2006-01-02 15:04 UTC"), time.Since(r.started).Round(time.Second))
	for _, p := range r.parts {
		md.WriteString(p + "\n")
	}
	for _, c := range charts {
		h := c.h
		if h == 0 {
			h = 4.5 * vg.Inch
		}
		if err := c.p.Save(8*vg.Inch, h, filepath.Join(dir, c.file)); err != nil {
			return fmt.Errorf("chart %s: %w", c.file, err)
		}
		fmt.Fprintf(&md, "![%s](%s)\n\n", c.p.Title.Text, c.file)
	}
	if _, err := io.WriteString(w, md.String()); err != nil {
		return err
	}
	if dir == "" {
		return nil
	}
	return os.WriteFile(filepath.Join(dir, r.name+".md"), []byte(md.String()), 0o644)
}
