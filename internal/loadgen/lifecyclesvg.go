package loadgen

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
)

// lifecycleSeries are the lines of an abandonment sale's picture: field, label, colour
// (Okabe-Ito, told apart without colour by their labels at the line ends).
var lifecycleSeries = []struct {
	name, color, dash string
	value             func(LifecycleSecond) int64
}{
	{"reserved", "#D55E00", "", func(r LifecycleSecond) int64 { return r.Reserved }},
	{"paid", "#009E73", "", func(r LifecycleSecond) int64 { return r.Paid }},
	{"expired", "#CC79A7", "", func(r LifecycleSecond) int64 { return r.Expired }},
	{"resold", "#0072B2", "8 4", func(r LifecycleSecond) int64 { return r.Resold }}, // often on expired: dashed over it
}

// endLabel is a line's label at its end: its text, colour and height, pushed apart from the
// others' (spreadLabels).
type endLabel struct {
	text, color string
	y           float64
}

// spreadLabels moves labels (sorted by height) at least 16 px apart, keeping them above bottom.
func spreadLabels(labels []endLabel, bottom float64) {
	slices.SortFunc(labels, func(a, b endLabel) int { return cmp.Compare(a.y, b.y) })
	for i := 1; i < len(labels); i++ {
		labels[i].y = max(labels[i].y, labels[i-1].y+16)
	}
	if n := len(labels); n > 0 && labels[n-1].y > bottom {
		over := labels[n-1].y - bottom
		for i := range labels {
			labels[i].y -= over
		}
	}
}

// LifecycleSVG draws an abandonment sale's timeline as a self-contained SVG.
func LifecycleSVG(w io.Writer, name string, l *LifecycleReport) error {
	const width, height, left, right, top, bottom = 760, 340, 56, 110, 40, 64
	initial, last := l.Audit.InitialStock, 1
	ymax := max(initial, 1)
	for _, r := range l.Timeline {
		last = max(last, r.S)
		for _, s := range lifecycleSeries {
			ymax = max(ymax, s.value(r))
		}
	}
	ymax += ymax / 10
	x := func(s int) float64 { return left + float64(width-left-right)*float64(s)/float64(last) }
	y := func(v int64) float64 { return height - bottom - float64(height-top-bottom)*float64(v)/float64(ymax) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="lifecycle" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#fff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", left,
		html.EscapeString(fmt.Sprintf("%s: abandonment sale, pay within %d ms, stopped %s", name, l.PayWithinMS, l.StopReason)))
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/><line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>`+"\n",
		left, width-right, height-bottom, height-bottom, left, left, top, height-bottom)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%d</text><text x="%d" y="%d" text-anchor="end">0</text><text x="%d" y="%d" text-anchor="end">units</text>`+"\n",
		left-6, int(y(ymax))+4, ymax, left-6, height-bottom+4, left-6, top-8)
	fmt.Fprintf(&b, `<text x="%d" y="%d">0 s</text><text x="%d" y="%d" text-anchor="end">%d s</text>`+"\n",
		left, height-bottom+18, width-right, height-bottom+18, last)
	fmt.Fprintf(&b, `<line class="initial" x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#555" stroke-dasharray="2 4"/>`+"\n",
		left, width-right, y(initial), y(initial))
	labels := []endLabel{{fmt.Sprintf("initial %d", initial), "#555", y(initial) + 4}}
	for _, s := range lifecycleSeries {
		var d strings.Builder
		fmt.Fprintf(&d, "M%.1f %.1f", x(0), y(0))
		for _, r := range l.Timeline {
			fmt.Fprintf(&d, " L%.1f %.1f", x(r.S), y(s.value(r)))
		}
		dash := ""
		if s.dash != "" {
			dash = ` stroke-dasharray="` + s.dash + `"`
		}
		fmt.Fprintf(&b, `<path class="series" data-name="%s" d="%s" stroke="%s" stroke-width="2.5" fill="none"%s/>`+"\n", s.name, d.String(), s.color, dash)
		if n := len(l.Timeline); n > 0 {
			v := s.value(l.Timeline[n-1])
			labels = append(labels, endLabel{fmt.Sprintf("%s %d", s.name, v), s.color, y(v) + 4})
		}
	}
	spreadLabels(labels, height-bottom+4)
	for _, lb := range labels {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" fill="%s">%s</text>`+"\n", width-right+6, lb.y, lb.color, html.EscapeString(lb.text))
	}
	a := l.Audit
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#52606d" font-size="12">%s</text>`+"\n", left, height-bottom+36, html.EscapeString(fmt.Sprintf(
		"settled (%s audit): stock %d + pending %d + paid %d = %d of %d units; ended %d, resold %d",
		a.Source, a.Stock, a.Pending, a.Paid, a.Stock+a.Pending+a.Paid, a.InitialStock, a.Ended, a.Resold)))
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#52606d" font-size="12">cumulative, each second: reserved and resold from loadtest's answers, paid and expired from the API's audit</text>`+"\n",
		left, height-bottom+54)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// lifecyclesHTML is the pictures of rep's abandonment sales, for the end of the -plot page;
// empty without one.
func lifecyclesHTML(rep Report) []byte {
	var b strings.Builder
	for _, round := range rep.Rounds {
		for _, r := range round {
			if r.Lifecycle != nil {
				b.WriteString(`<div style="margin:1em">`)
				_ = LifecycleSVG(&b, r.Name, r.Lifecycle) // a strings.Builder does not fail
				b.WriteString("</div>\n")
			}
		}
	}
	return []byte(b.String())
}
