package loadgen

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// Stalls of stallServer: every stallEvery, from stallAt into the period, it holds every
// request that arrives until stallFor has passed.
const (
	stallEvery = 5 * time.Second
	stallAt    = 2 * time.Second
	stallFor   = time.Second
)

// stallHold is how long a request that arrived at since (from the server's start) is held.
func stallHold(since time.Duration) time.Duration {
	if phase := since % stallEvery; phase >= stallAt && phase < stallAt+stallFor {
		return stallAt + stallFor - phase
	}
	return 0
}

// TestStallCorrectedP99: an open run of 200 arrivals a second for 15 s on a server that answers
// at once but stalls 1 s every 5 s. The true latency of each arrival runs from when it was due
// on the schedule, as the server saw it, to when its answer reached the client (vegeta's own
// send time and raw latency): a fifth of the arrivals wait up to a second, and the true p99 is
// about 0.95 s. The corrected p99 must be within 5% of it, on an idle machine and with a busy
// process spinning on each other core (the machine's other work aside). The p99 to the
// server's answer is logged too: on a starved machine the answers of a stall's end reach the
// client late, a delay the client's clock sees and no correction of the start can remove.
func TestStallCorrectedP99(t *testing.T) {
	for _, tt := range []struct {
		name     string
		spinners int
	}{{"idle", 0}, {"loaded", max(1, runtime.NumCPU()-1)}} {
		t.Run(tt.name, func(t *testing.T) {
			for range tt.spinners {
				spin(t, 30*time.Second)
			}
			began := time.Now()
			srv := newSeqServer(t, func(_ uint64, arrived time.Time) time.Duration { return stallHold(arrived.Sub(began)) })
			const rate = 200
			var got receipts
			res, err := attack(context.Background(), openSpec(srv.urls, rate, 15*time.Second), &liveCounts{}, nil, got.encoder())
			if err != nil {
				t.Fatal(err)
			}
			st := summarize(res)
			sched := newSchedule(rate, nil)
			epoch := srv.epoch(t, sched)
			truth, atServer := sinceDue(sched, epoch, got.at), sinceDue(sched, epoch, srv.answered())
			want, corrected := quantile(truth, 0.99), st.LatencyCorrected.P99
			t.Logf("%s (%d spinners, load average %s): true p99 %.1f ms (to the server's answer %.1f ms), corrected p99 %.1f ms (%+.1f%%), raw p99 %.1f ms; arrivals %+v",
				tt.name, tt.spinners, loadAverage(), want, quantile(atServer, 0.99), corrected, 100*(corrected-want)/want, st.Latency.P99, st.Arrivals)
			if int64(len(truth)) != st.Requests || len(atServer) != len(truth) || st.Requests < 2500 {
				t.Fatalf("%d answers received, %d answered, %d requests; want those of about 3,000 arrivals", len(truth), len(atServer), st.Requests)
			}
			if quantile(atServer, 0.99) < 800 {
				t.Fatalf("p99 to the server's answer %.1f ms: the server did not stall as planned", quantile(atServer, 0.99))
			}
			if d := corrected - want; d > 0.05*want || d < -0.05*want {
				t.Errorf("corrected p99 %.1f ms, true p99 %.1f ms: off by more than 5%%", corrected, want)
			}
		})
	}
}

// spin starts a process that keeps one core busy for at most d, and stops it when the test
// ends: this test binary again, running TestSpinHelper.
func spin(t *testing.T, d time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSpinHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LOADGEN_SPIN_FOR="+d.String())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
}

// TestSpinHelper is spin's busy process: it spins for LOADGEN_SPIN_FOR, and does nothing
// without it.
func TestSpinHelper(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("LOADGEN_SPIN_FOR"))
	if err != nil {
		return
	}
	runtime.GOMAXPROCS(1)
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		n++
	}
	_ = n
}

// loadAverage is the machine's 1-minute load average, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil || len(b) == 0 {
		return "unknown"
	}
	for i, c := range b {
		if c == ' ' {
			return string(b[:i])
		}
	}
	return string(b)
}
