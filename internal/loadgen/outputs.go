package loadgen

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"github.com/tsenart/vegeta/v12/lib/plot"
)

// outputs are the files an invocation writes besides its text report: vegeta's binary
// results (streamed during the attacks), the rows of each second (-csv, after each attack),
// the latency distributions (-hist, one file per attack) and the HTML latency plot (written
// at the end).
type outputs struct {
	csvFile *os.File
	csv     *csv.Writer
	// histPath is -hist; with more than one attack (histMany), each attack's file is named
	// after it (histFile).
	histPath  string
	histMany  bool
	histNames map[string]bool

	results *os.File
	buf     *bufio.Writer
	enc     vegeta.Encoder // nil without -results

	plotPath string
	plot     *plot.Plot
	extra    []byte // HTML to add at the end of the plot's page
	// outcomes[attack][seq] labels the plot's points; see addPlot.
	outcomes map[string][]Outcome
}

func openOutputs(cfg Config, title string) (*outputs, error) {
	o := &outputs{plotPath: cfg.PlotPath, outcomes: map[string][]Outcome{}, histPath: cfg.HistPath, histNames: map[string]bool{},
		histMany: cfg.Runs > 1 || cfg.Baseline || len(cfg.Items()) != 1}
	if cfg.CSVPath != "" {
		f, err := os.Create(cfg.CSVPath)
		if err != nil {
			return nil, fmt.Errorf("-csv: %w", err)
		}
		if o.csv, err = newCSV(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("-csv: %w", err)
		}
		o.csvFile = f
	}
	if cfg.ResultsPath != "" {
		f, err := os.Create(cfg.ResultsPath)
		if err != nil {
			return nil, fmt.Errorf("-results: %w", err)
		}
		o.results, o.buf = f, bufio.NewWriterSize(f, 256<<10)
		o.enc = vegeta.NewEncoder(o.buf)
	}
	if cfg.PlotPath != "" {
		o.plot = plot.New(
			plot.Title(title),
			plot.Downsample(4000), // what `vegeta plot` does by default
			plot.Label(func(r *vegeta.Result) string { return plotLabel(o.outcomes[r.Attack][r.Seq]) }),
		)
	}
	return o, nil
}

// plotLabel names the series of an outcome; vegeta colours labels containing ERROR red.
func plotLabel(o Outcome) string {
	if o.isError() {
		return "ERROR " + o.String()
	}
	return o.String()
}

// add adds one attack to the files: its rows to -csv, its distribution to -hist, its samples
// to the plot.
func (o *outputs) add(res *attackResult) error {
	var errs []error
	if o.csv != nil {
		if err := writeCSV(o.csv, res.name, res.seconds); err != nil {
			errs = append(errs, fmt.Errorf("-csv: %w", err))
		}
	}
	if o.histPath != "" {
		errs = append(errs, o.writeHist(res))
	}
	return errors.Join(append(errs, o.addPlot(res))...)
}

// writeHist writes the corrected latencies of res to its -hist file.
func (o *outputs) writeHist(res *attackResult) error {
	path := o.histPath
	if o.histMany {
		name := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
				return r
			}
			return '_'
		}, res.name)
		for i, base := 2, name; o.histNames[name]; i++ { // a repeated run gets its own file
			name = fmt.Sprintf("%s_%d", base, i)
		}
		o.histNames[name] = true
		ext := filepath.Ext(path)
		path = strings.TrimSuffix(path, ext) + "." + name + ext
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-hist: %w", err)
	}
	err = writeHgrm(f, res.tally.corrected)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("-hist: %w", err)
	}
	return nil
}

// addPlot adds one attack's samples to the plot. The plot draws points in sequence order
// and waits for gaps to fill, so the samples (sorted by vegeta's sequence number, with the
// excluded results missing) are renumbered 0, 1, 2, ... first.
func (o *outputs) addPlot(res *attackResult) error {
	if o.plot == nil {
		return nil
	}
	name := res.name
	for i := 2; o.outcomes[name] != nil; i++ { // a repeated run gets its own series
		name = fmt.Sprintf("%s #%d", res.name, i)
	}
	labels := make([]Outcome, len(res.samples))
	o.outcomes[name] = labels
	for i, s := range res.samples {
		labels[i] = s.out
		r := vegeta.Result{Attack: name, Seq: uint64(i), Timestamp: res.began.Add(s.at), Latency: s.lat}
		if err := o.plot.Add(&r); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
	}
	return nil
}

// retitle sets the title of the plot, which its page shows above the chart.
func (o *outputs) retitle(title string) {
	if o.plot != nil {
		plot.Title(title)(o.plot)
	}
}

// close flushes the results file and writes the plot.
func (o *outputs) close() error {
	var errs []error
	if o.results != nil {
		errs = append(errs, o.buf.Flush(), o.results.Close())
	}
	if o.csvFile != nil {
		o.csv.Flush()
		errs = append(errs, o.csv.Error(), o.csvFile.Close())
	}
	if o.plot != nil {
		o.plot.Close()
		f, err := os.Create(o.plotPath)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("-plot: %w", err))...)
		}
		var page bytes.Buffer
		_, err = o.plot.WriteTo(&page)
		if err == nil { // an abandonment sale's pictures go below the latency plot (lifecyclesvg.go)
			_, err = f.Write(bytes.Replace(page.Bytes(), []byte("</body>"), append(o.extra, "</body>"...), 1))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("-plot: %w", err))
		}
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
