package loadgen

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// ModelsSVG draws each report's raw and corrected p99 as a self-contained SVG.
func ModelsSVG(w io.Writer, title string, reps []Report) error {
	type bar struct {
		label, detail string
		raw, cor      float64
	}
	var bars []bar
	top := 1.0
	for _, rep := range reps {
		if len(rep.Rounds) == 0 || len(rep.Rounds[0]) == 0 {
			return fmt.Errorf("a report without a run")
		}
		st := rep.Rounds[0][0].Stats
		sc := rep.Scenario
		label := fmt.Sprintf("closed: %d workers, as fast as answered", sc.Workers)
		switch {
		case st.Model == ModelOpen:
			label = fmt.Sprintf("open: %d arrivals/s (at most %d in flight)", sc.Rate, sc.MaxWorkers)
		case sc.Rate > 0:
			label = fmt.Sprintf("closed: %d workers paced at %d req/s (wrk2)", sc.Workers, sc.Rate)
		}
		a := st.Arrivals
		detail := fmt.Sprintf("%d answered in %.1f s: %.0f/s, at most %d in flight", st.Requests, st.Seconds, st.Throughput, a.MaxInFlight)
		if a.Scheduled > 0 {
			detail += fmt.Sprintf("; %d due, %d sent > %v late, %d never sent", a.Scheduled, a.Delayed, delaySlack, a.Dropped)
		}
		for o, n := range st.Outcomes {
			if n > 0 && Outcome(o) != Bought && Outcome(o) != SoldOut {
				detail += fmt.Sprintf("; %d %s", n, Outcome(o))
			}
		}
		bars = append(bars, bar{label, detail, st.Latency.P99, st.LatencyCorrected.P99})
		top = max(top, st.Latency.P99, st.LatencyCorrected.P99)
	}
	const width, left, right, rowH, head = 760, 20, 120, 92, 58
	scale := float64(width-left-right) / top
	height := head + rowH*len(bars) + 34
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#fff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))
	fmt.Fprintf(&b, `<rect x="%d" y="34" width="12" height="12" fill="#9aa5b1"/><text x="%d" y="45">raw p99: from each request's send</text>`+"\n", left, left+18)
	fmt.Fprintf(&b, `<rect x="%d" y="34" width="12" height="12" fill="#d64545"/><text x="%d" y="45">corrected p99: from when it was due</text>`+"\n", left+260, left+278)
	for i, br := range bars {
		y := head + i*rowH
		fmt.Fprintf(&b, `<g class="run"><text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", left, y+14, html.EscapeString(br.label))
		for j, v := range []float64{br.raw, br.cor} {
			color, by := "#9aa5b1", y+22+j*22
			if j == 1 {
				color = "#d64545"
			}
			wd := max(1, v*scale)
			fmt.Fprintf(&b, `<rect class="bar" x="%d" y="%d" width="%.1f" height="18" fill="%s"/><text x="%.1f" y="%d">%s</text>`+"\n",
				left, by, wd, color, float64(left)+wd+6, by+14, fmtMS(v))
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#52606d" font-size="12">%s</text></g>`+"\n", left, y+80, html.EscapeString(br.detail))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
