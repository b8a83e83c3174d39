package labrun

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteMatrix prints the matrix: a row per lock, a column per scenario, and the crowd
// column's rates.
func WriteMatrix(w io.Writer, res Result) {
	locks, scens, byPair := res.axes()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "lock\t%s\tcrowd orders/s\tcrowd handoffs/s\tcrowd inversions\n", strings.Join(scens, "\t"))
	for _, l := range locks {
		row := []string{l}
		for _, s := range scens {
			c := byPair[Pair{Lock: l, Scenario: s}]
			switch {
			case c == nil:
				row = append(row, "-")
			case c.OK():
				row = append(row, c.Summary())
			default:
				row = append(row, c.Summary()+" (expected "+c.Expected+")")
			}
		}
		if c := byPair[Pair{Lock: l, Scenario: "crowd"}]; c != nil {
			row = append(row, fmt.Sprintf("%.0f", c.OrdersPerSec), fmt.Sprintf("%.0f", c.HandoffsPerSec), fmt.Sprint(c.Inversions))
		} else {
			row = append(row, "-", "-", "-")
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	for _, c := range res.Cells {
		if c.Verdict == Stalled || c.Error != "" || c.Fault != "" {
			fmt.Fprintf(w, "%s × %s: %s%s\n", c.Lock, c.Scenario, c.Fault, suffix(c))
		}
	}
	for _, c := range res.Cells {
		if h := c.History; h != nil {
			mark := ""
			if !h.OK() {
				mark = " (expected " + h.Expected + ")"
			}
			fmt.Fprintf(w, "%s × %s: %s%s\n", c.Lock, c.Scenario, h, mark)
		}
	}
	fmt.Fprintf(w, "%d cells in %.0fs\n", len(res.Cells), res.Seconds)
}

func suffix(c Cell) string {
	switch {
	case c.Error != "":
		return "; error: " + c.Error
	case c.Verdict == Stalled:
		return "; stuck: " + c.StuckKey
	}
	return ""
}

// axes returns the matrix's rows (locks) and columns (scenarios) in the order the cells ran,
// and each cell by its pair.
func (r Result) axes() (locks, scenarios []string, cells map[Pair]*Cell) {
	cells = map[Pair]*Cell{}
	for i, c := range r.Cells {
		if !slices.Contains(locks, c.Lock) {
			locks = append(locks, c.Lock)
		}
		if !slices.Contains(scenarios, c.Scenario) {
			scenarios = append(scenarios, c.Scenario)
		}
		cells[Pair{Lock: c.Lock, Scenario: c.Scenario}] = &r.Cells[i]
	}
	return locks, scenarios, cells
}
