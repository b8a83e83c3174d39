// Command modelsvg draws docs/loadtest-models.svg, the picture of open against closed load
// under saturation, from the JSON reports (-json) of the runs scripts/loadtest-models.sh makes:
//
//	go run ./internal/loadgen/cmd/modelsvg -title TITLE -out docs/loadtest-models.svg a.json b.json c.json
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/seckill/seckill/internal/loadgen"
)

func main() {
	title := flag.String("title", "p99 of the same saturated service under each load model", "the picture's title")
	out := flag.String("out", "docs/loadtest-models.svg", "the picture to write")
	flag.Parse()
	var reps []loadgen.Report
	for _, p := range flag.Args() {
		r, err := loadgen.ReadReport(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "modelsvg:", err)
			os.Exit(1)
		}
		reps = append(reps, r)
	}
	f, err := os.Create(*out)
	if err == nil {
		err = loadgen.ModelsSVG(f, *title, reps)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "modelsvg:", err)
		os.Exit(1)
	}
}
