package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"github.com/tsenart/vegeta/v12/lib/plot"
)

// outputs are the files an invocation writes besides its text report: vegeta's binary
// results (streamed during the attacks) and the HTML latency plot (written at the end).
type outputs struct {
	results *os.File
	buf     *bufio.Writer
	enc     vegeta.Encoder // nil without -results

	plotPath string
	plot     *plot.Plot
	// outcomes[attack][seq] labels the plot's points; see addPlot.
	outcomes map[string][]outcome
}

func openOutputs(cfg config, title string) (*outputs, error) {
	o := &outputs{plotPath: cfg.plotPath, outcomes: map[string][]outcome{}}
	if cfg.resultsPath != "" {
		f, err := os.Create(cfg.resultsPath)
		if err != nil {
			return nil, fmt.Errorf("-results: %w", err)
		}
		o.results, o.buf = f, bufio.NewWriterSize(f, 256<<10)
		o.enc = vegeta.NewEncoder(o.buf)
	}
	if cfg.plotPath != "" {
		o.plot = plot.New(
			plot.Title(title),
			plot.Downsample(4000), // what `vegeta plot` does by default
			plot.Label(func(r *vegeta.Result) string { return plotLabel(o.outcomes[r.Attack][r.Seq]) }),
		)
	}
	return o, nil
}

// plotLabel names the series of an outcome; vegeta colours labels containing ERROR red.
func plotLabel(o outcome) string {
	if o.isError() {
		return "ERROR " + o.String()
	}
	return o.String()
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
	labels := make([]outcome, len(res.samples))
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
	if o.plot != nil {
		o.plot.Close()
		f, err := os.Create(o.plotPath)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("-plot: %w", err))...)
		}
		if _, err := o.plot.WriteTo(f); err != nil {
			errs = append(errs, fmt.Errorf("-plot: %w", err))
		}
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
