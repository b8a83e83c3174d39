//go:build linux

package gameday_test

import (
	"fmt"
	"html"
	"os"
	"slices"
	"strings"
	"time"
)

// outcomeColors are the page's kinds of answers, in the order they stack, with their colours.
var outcomeColors = []struct{ Kind, Color, Label string }{
	{"bought", "#2e7d32", "201 bought / 202 queued"},
	{"soldout", "#90caf9", "409 sold out"},
	{"api503", "#ffb300", "503 from an API (unavailable, busy, outcome unknown)"},
	{"lb", "#e65100", "HAProxy's own 502/503/504"},
	{"refused", "#8d6e63", "no connection (nothing sent)"},
	{"lost", "#000000", "sent, never answered"},
	{"other", "#d50000", "anything else (500, 4xx)"},
}

// kind is the page's kind of an attempt's answer.
func (a attempt) kind() string {
	switch c := a.class(); {
	case c == "201" || c == "202":
		return "bought"
	case c == "409":
		return "soldout"
	case c == "refused" || c == "lost":
		return c
	case a.LB:
		return "lb"
	case a.Status == 503:
		return "api503"
	}
	return "other"
}

// Sizes of the timeline, in SVG units.
const (
	plotLeft, plotWidth = 190.0, 1150.0
	bandTop, barsTop    = 20.0, 40.0
	barsHeight          = 180.0
	laneHeight          = 16.0
)

// writePage writes the report as one self-contained HTML page: a verdict, the timeline
// (faults as bands, answers per second by kind, alerts as bars), the alerts per fault and the
// table of cells. It needs nothing but itself: no script, no network.
func (r *report) writePage(path string) error {
	var b strings.Builder
	ok := true
	cells := 0
	for _, fr := range r.Faults {
		ok = ok && fr.Alerts.ok()
		for _, v := range fr.Verdicts {
			ok, cells = ok && v.ok(fr.QueueLoss), cells+1
		}
	}
	ok = ok && len(r.Healthy) == 0
	word := map[bool]string{true: "PASS", false: "FAIL"}[ok]
	fmt.Fprintf(&b, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>seckill game day %s</title><style>
body{font:14px system-ui,sans-serif;margin:20px;color:#222}h1{font-size:20px}
#verdict{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff}#verdict.PASS{background:#2e7d32}#verdict.FAIL{background:#c62828}
table{border-collapse:collapse;margin:10px 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}td:first-child,td:nth-child(2),th{text-align:left}
tr.FAIL td{background:#ffebee}#faults td{text-align:left}.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
svg text{font-size:11px}.note{color:#555}
</style></head><body>
<h1>seckill game day: <span id="verdict" class="%s">%s</span></h1>
<p class="note">%s, %s. %d faults, %d cells; schedule %v, deployment up in %v. Each fault hits a sale per cell (new buyers through HAProxy, more than the stock); a cell passes with no answer lost, none untrue (201 ⇔ an order in PostgreSQL, sold = orders, no duplicate) and its history linearizable; a fault passes when each expected alert reached the webhook in time and no other did.</p>
`, word, word, word, html.EscapeString(r.modeWords()), r.Start.UTC().Format("2006-01-02 15:04 UTC"), len(r.Faults), cells,
		r.End.Sub(r.Start).Round(time.Second), r.Setup.Round(time.Second))
	b.WriteString(r.svg())
	b.WriteString(`<p class="legend">`)
	for _, o := range outcomeColors {
		fmt.Fprintf(&b, `<span style="background:%s"></span>%s`, o.Color, html.EscapeString(o.Label))
	}
	b.WriteString(`<span style="background:#c62828"></span>critical alert<span style="background:#f9a825"></span>warning alert<span style="background:#ef9a9a;opacity:.5"></span>fault</p>`)
	b.WriteString("<h2>Faults and alerts</h2><table id=\"faults\"><thead><tr><th>fault</th><th>what happened</th><th>alerts at the webhook (* expected, + seconds after the fault)</th><th>alerts</th></tr></thead><tbody>\n")
	for _, fr := range r.Faults {
		fmt.Fprintf(&b, "<tr class=\"%s\"><td>%s</td><td>%s<br><span class=note>%s; %s</span></td><td>%s</td><td>%s</td></tr>\n",
			pass(fr.Alerts.ok()), html.EscapeString(fr.Name), html.EscapeString(fr.Title), html.EscapeString(fr.InjectNote),
			html.EscapeString(fr.HealNote), html.EscapeString(fr.Alerts.line()), pass(fr.Alerts.ok()))
	}
	b.WriteString("</tbody></table>\n<h2>Cells</h2><table id=\"cells\"><thead><tr><th>fault</th><th>strategy</th><th>buyers</th><th>201</th><th>202</th><th>409</th><th>not served</th><th>lost</th><th>untrue</th><th>202 lost</th><th>unavailable s</th><th>recover s</th><th>history</th><th>verdict</th></tr></thead><tbody>\n")
	for _, fr := range r.Faults {
		for _, v := range fr.Verdicts {
			word := pass(v.ok(fr.QueueLoss))
			untrue := fmt.Sprint(len(v.Untrue))
			if len(v.Untrue) > 0 {
				untrue = fmt.Sprintf(`<span title="%s">%d</span>`, html.EscapeString(strings.Join(first(v.Untrue, 20), "\n")), len(v.Untrue))
			}
			fmt.Fprintf(&b, "<tr class=\"%s\"><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td><td>%d</td><td>%.0f</td><td>%.1f</td><td>%s</td><td>%s</td></tr>\n",
				word, html.EscapeString(v.Fault), html.EscapeString(v.Strategy), v.Attempts, v.Classes["201"], v.Classes["202"],
				v.Classes["409"], v.refused(), v.Lost, untrue, v.QueuedLost, v.UnavailableS, v.RecoverS,
				html.EscapeString(v.History+" "+v.Err), word)
		}
	}
	b.WriteString("</tbody></table>\n<p class=note>202 lost: a queued purchase Redis forgot, never written (allowed only where a fault makes Redis lose writes). unavailable s: whole seconds from the fault on in which buyers tried and none was served (201, 202, 409); recover s: from the fault to the last buyer not served.</p>\n</body></html>\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func (r *report) modeWords() string {
	if r.Full {
		return "the whole schedule (make gameday)"
	}
	return "one cell of each fault (make test)"
}

// svg is the timeline: one band per fault, answers per second by kind stacked, a lane per
// alert name with a bar from its firing notice to its resolved one.
func (r *report) svg() string {
	total := r.End.Sub(r.Start).Seconds()
	if total <= 0 {
		total = 1
	}
	x := func(t time.Time) float64 {
		return plotLeft + plotWidth*max(0, min(t.Sub(r.Start).Seconds(), total))/total
	}
	// Answers per second by kind, every cell together, by the time the answer came.
	secs := int(total) + 1
	counts := make([]map[string]int, secs)
	peak := 1
	for _, fr := range r.Faults {
		for _, c := range fr.Cells {
			for _, a := range c.attempts() {
				s := int(a.Done.Sub(r.Start).Seconds())
				if s < 0 || s >= secs {
					continue
				}
				if counts[s] == nil {
					counts[s] = map[string]int{}
				}
				counts[s][a.kind()]++
			}
		}
	}
	for _, m := range counts {
		n := 0
		for _, k := range m {
			n += k
		}
		peak = max(peak, n)
	}
	var names []string
	for _, s := range r.Spans {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	alertsTop := barsTop + barsHeight + 30
	height := alertsTop + laneHeight*float64(len(names)) + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`,
		plotLeft+plotWidth+20, height, plotLeft+plotWidth+20, height)
	for _, fr := range r.Faults {
		x0, x1 := x(fr.Inject), x(fr.Heal)
		if x1-x0 < 3 {
			x1 = x0 + 3
		}
		fmt.Fprintf(&b, `<rect class="band" data-fault="%s" x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="#ef9a9a" opacity=".45"><title>%s: %s</title></rect>`,
			html.EscapeString(fr.Name), x0, bandTop, x1-x0, height-bandTop-20, html.EscapeString(fr.Name), html.EscapeString(fr.Title))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f">%s</text>`, x0, bandTop-6, html.EscapeString(fr.Name))
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#999" stroke-dasharray="2,3"/>`, x(fr.End), x(fr.End), bandTop, height-20)
	}
	fmt.Fprintf(&b, `<text x="4" y="%.0f">answers / s (peak %d)</text>`, barsTop+12, peak)
	w := plotWidth / float64(secs)
	for s, m := range counts {
		y := barsTop + barsHeight
		for _, o := range outcomeColors {
			n := m[o.Kind]
			if n == 0 {
				continue
			}
			h := barsHeight * float64(n) / float64(peak)
			y -= h
			fmt.Fprintf(&b, `<rect class="bar %s" x="%.1f" y="%.1f" width="%.2f" height="%.1f" fill="%s"><title>+%ds: %d %s</title></rect>`,
				o.Kind, plotLeft+float64(s)*w, y, max(w-0.3, 0.5), h, o.Color, s, n, html.EscapeString(o.Label))
		}
	}
	fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="#444"/>`, plotLeft, plotLeft+plotWidth, barsTop+barsHeight, barsTop+barsHeight)
	for i, name := range names {
		y := alertsTop + laneHeight*float64(i)
		fmt.Fprintf(&b, `<text x="4" y="%.0f">%s</text>`, y+11, html.EscapeString(name))
		for _, s := range r.Spans {
			if s.Name != name {
				continue
			}
			end := s.End
			if end.IsZero() {
				end = r.End
			}
			color := map[string]string{"critical": "#c62828"}[s.Severity]
			if color == "" {
				color = "#f9a825"
			}
			fmt.Fprintf(&b, `<rect class="alert" data-alert="%s" x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="%s"><title>%s (%s) %s</title></rect>`,
				html.EscapeString(name), x(s.Start), y+2, max(x(end)-x(s.Start), 2), laneHeight-4, color,
				html.EscapeString(name), s.Severity, html.EscapeString(s.Key))
		}
	}
	// A tick a minute.
	for m := 0; float64(m*60) <= total; m++ {
		tx := plotLeft + plotWidth*float64(m*60)/total
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%dm</text>`, tx, height-6, m)
	}
	b.WriteString("</svg>\n")
	return b.String()
}
