package labrun

import (
	_ "embed"
	"encoding/json"
	"html/template"
	"io"

	"github.com/seckill/seckill/internal/timeline"
)

// reportPage is the report's page: the matrix, then a chart per cell, drawn by its own
// script from the cells embedded as JSON. It loads nothing from the network.
//
//go:embed report/lab.html
var reportPage string

var reportTmpl = template.Must(template.New("lab").Parse(reportPage))

// WriteReport writes res as one self-contained HTML page: the matrix (each cell's verdict,
// red where it differs from the expected one) and, for each cell, a chart of orders and
// stock over the sale with the initial stock drawn as a line, so that an oversell shows as
// the orders line crossing it and a stall as flat lines with stock left; then each cell's
// lock timeline (internal/timeline), drawn by the script that package defines.
func WriteReport(w io.Writer, res Result) error {
	cells, err := json.Marshal(res.Cells)
	if err != nil {
		return err
	}
	locks, scens, byPair := res.axes()
	type row struct {
		Lock  string
		Cells []*Cell
	}
	var rows []row
	for _, l := range locks {
		r := row{Lock: l}
		for _, s := range scens {
			r.Cells = append(r.Cells, byPair[Pair{Lock: l, Scenario: s}])
		}
		rows = append(rows, r)
	}
	return reportTmpl.Execute(w, map[string]any{
		"Result": res, "Scenarios": scens, "Rows": rows, "OK": res.OK(),
		"Cells":       template.JS(cells), // our own JSON, from json.Marshal: safe inside <script>
		"TimelineJS":  template.JS(timeline.JS),
		"TimelineCSS": template.CSS(timeline.CSS),
	})
}
