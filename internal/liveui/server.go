package liveui

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seckill/seckill/internal/labrun"
	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/timeline"
)

// uiAssets are the page, its scripts and its style: everything the page loads.
//
//go:embed ui
var uiAssets embed.FS

// Config is what loadtest ui fixes at start: where runs are kept, what a run may attack
// and how hard, who may use the page, and what a run starts from.
type Config struct {
	Dir         string   // where runs are kept, one directory each
	Targets     []Target // the APIs a strategies run may attack (-targets)
	EtcdTargets []Target // and those whose locks are in etcd (-etcd-targets of compare)
	Limits      Limits   // the ceilings of a strategies run
	Public      bool     // serve any Host, not only loopback names
	// AccessToken, when set (-public wants one), is the basic auth password every request
	// must carry.
	AccessToken string
	// LabPrefix is the REDIS_KEY_PREFIX of the lab's processes; empty: a random one per run.
	LabPrefix string
	// Compare is what a strategies run starts from: loadtest compare's configuration with no
	// flag set (its defaults and the environment: the admin token, PostgreSQL and Redis to
	// audit). Each run sets its scenario, targets and files, then checks it as the command
	// line would (loadgen.Config.Complete).
	Compare loadgen.Config
	// Lab is what a lab run starts from: loadtest lab's configuration with no flag set.
	Lab loadgen.LabConfig
}

// Server serves loadtest ui: the page, its API, and at most one run at a time.
type Server struct {
	Config
	stderr    io.Writer // the runs' log
	pageToken string    // random at each start: the page has it, other sites cannot read it

	mu      sync.Mutex
	runs    map[string]*uiRun
	current *uiRun // the run going, if any
	closed  bool   // close was called: no more runs
	wg      sync.WaitGroup
}

// New returns the server of the runs kept under c.Dir, loading the past ones; the runs log to
// stderr. Close stops it.
func New(c Config, stderr io.Writer) (*Server, error) {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, err
	}
	c.Targets, c.EtcdTargets = append([]Target{}, c.Targets...), append([]Target{}, c.EtcdTargets...) // [] in JSON, not null
	u := &Server{Config: c, stderr: stderr, pageToken: rand.Text(), runs: map[string]*uiRun{}}
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() && runID.MatchString(e.Name()) {
			if r, err := loadUIRun(filepath.Join(c.Dir, e.Name())); err == nil {
				u.runs[r.info.ID] = r
			}
		}
	}
	return u, nil
}

// runID is the form of a run's id: its start time and four random characters.
var runID = regexp.MustCompile(`^[0-9]{8}-[0-9]{6}-[a-z0-9]{4}$`)

// Close refuses new runs, stops the run going, if any, and waits until it is written.
func (u *Server) Close() {
	u.mu.Lock()
	u.closed = true
	if c := u.current; c != nil {
		c.cancel()
	}
	u.mu.Unlock()
	u.wg.Wait()
}

// Handler is every route of the page and its API, behind the guard (guard.go).
func (u *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", u.asset("index.html", "text/html; charset=utf-8"))
	mux.HandleFunc("GET /assets/app.js", u.asset("app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /assets/cards.js", u.asset("cards.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /assets/opening.js", u.asset("opening.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /assets/lib.js", u.asset("lib.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /assets/style.css", u.asset("style.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /assets/timeline.js", serveTimeline("text/javascript; charset=utf-8", timeline.JS))
	mux.HandleFunc("GET /assets/timeline.css", serveTimeline("text/css; charset=utf-8", timeline.CSS))
	mux.HandleFunc("GET /api/options", u.handleOptions)
	mux.HandleFunc("GET /api/runs", u.handleList)
	mux.HandleFunc("POST /api/runs", u.handleStart)
	mux.HandleFunc("GET /api/runs/{id}", u.withRun(u.handleRun))
	mux.HandleFunc("POST /api/runs/{id}/stop", u.withRun(u.handleStop))
	mux.HandleFunc("GET /api/runs/{id}/events", u.withRun(u.handleEvents))
	mux.HandleFunc("GET /api/runs/{id}/{file}", u.withRun(u.handleFile))
	return u.guard(mux)
}

// serveTimeline serves the lock timeline's script or style (body, of contentType), which
// internal/timeline defines for this page and the lab's report.
func serveTimeline(contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "no-cache")
		io.WriteString(w, body)
	}
}

// asset serves an embedded file; the page (index.html) gets the per-start token.
func (u *Server) asset(name, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := uiAssets.ReadFile("ui/" + name)
		if err != nil {
			uiProblem(w, http.StatusNotFound, "not_found", "no such file")
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "no-cache")
		if name == "index.html" {
			b = bytes.Replace(b, []byte(`content="{{page-token}}"`), []byte(`content="`+u.pageToken+`"`), 1)
			w.Header().Set("Cache-Control", "no-store")
		}
		w.Write(b)
	}
}

// uiProblem answers status with a problem body: a machine-readable code and a sentence.
func uiProblem(w http.ResponseWriter, status int, code, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"status": status, "code": code, "detail": detail})
}

func writeUIJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// handleOptions answers what the form offers, its defaults and its limits.
func (u *Server) handleOptions(w http.ResponseWriter, r *http.Request) {
	type scen struct {
		Name  string `json:"name"`
		Fault string `json:"fault"`
		About string `json:"about"`
	}
	var scens []scen
	for _, s := range labrun.Scenarios {
		fault := ""
		switch s.Fault {
		case "kill":
			fault = "kill -9 of the lock's holder"
		case "pause":
			fault = fmt.Sprintf("SIGSTOP of the lock's holder for %s", s.Pause)
		case "failover":
			fault = "kill -9 of the Redis master under the lock's holder; Sentinel promotes a replica that lacks the lock"
		case "partition":
			fault = fmt.Sprintf("the lock's holder cut off from the lock's server for %s", s.Pause)
		}
		scens = append(scens, scen{Name: s.Name, Fault: fault, About: s.What})
	}
	writeUIJSON(w, http.StatusOK, map[string]any{
		"strategies":   append(slices.Clone(loadgen.Strategies), loadgen.FairStrategy),
		"locks":        labrun.Locks,
		"scenarios":    scens,
		"targets":      u.Targets,
		"etcd_targets": u.EtcdTargets,
		"defaults": map[string]any{"strategies": []string{"naive", "dlock"}, "stock": 100, "think_ms": 5,
			"buyers": min(64, u.Limits.Buyers), "duration_s": min(8, int(u.Limits.Duration/time.Second)), "rate": u.Limits.Rate,
			"locks": []string{"none", "setnx", "dlock"}, "scenario": "crowd"},
		"limits": map[string]any{"stock_max": 100_000_000, "think_ms_max": 10_000, "buyers_max": u.Limits.Buyers,
			"duration_s_max": int(u.Limits.Duration / time.Second), "rate_max": u.Limits.Rate},
	})
}

func (u *Server) handleList(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	infos := make([]runInfo, 0, len(u.runs))
	for _, run := range u.runs {
		infos = append(infos, run.snapshot())
	}
	u.mu.Unlock()
	slices.SortFunc(infos, func(a, b runInfo) int { return strings.Compare(b.ID, a.ID) })
	writeUIJSON(w, http.StatusOK, map[string]any{"runs": infos})
}

// withRun passes the run named by the path's id to h, or answers 404.
func (u *Server) withRun(h func(http.ResponseWriter, *http.Request, *uiRun)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		run := u.runs[r.PathValue("id")]
		u.mu.Unlock()
		if run == nil {
			uiProblem(w, http.StatusNotFound, "run_not_found", "no run "+strconv.Quote(r.PathValue("id")))
			return
		}
		h(w, r, run)
	}
}

func (u *Server) handleRun(w http.ResponseWriter, r *http.Request, run *uiRun) {
	writeUIJSON(w, http.StatusOK, run.snapshot())
}

func (u *Server) handleStop(w http.ResponseWriter, r *http.Request, run *uiRun) {
	if run.cancel != nil {
		run.cancel()
	}
	writeUIJSON(w, http.StatusAccepted, run.snapshot())
}

// handleFile serves one of a run's reports as a download.
func (u *Server) handleFile(w http.ResponseWriter, r *http.Request, run *uiRun) {
	name := r.PathValue("file")
	if !slices.Contains(reportFiles, name) {
		uiProblem(w, http.StatusNotFound, "not_found", "a run has "+strings.Join(reportFiles, ", "))
		return
	}
	f, err := os.Open(filepath.Join(run.dir, name))
	if err != nil {
		uiProblem(w, http.StatusNotFound, "not_found", "this run has no "+name+" (yet)")
		return
	}
	defer f.Close()
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", "seckill-"+run.info.ID+"-"+name))
	http.ServeContent(w, r, name, time.Time{}, f)
}

// handleEvents streams a run's events (server-sent events): those after Last-Event-ID (all
// of them on a first connection), then each new one as it comes, until the run ends.
func (u *Server) handleEvents(w http.ResponseWriter, r *http.Request, run *uiRun) {
	after, _ := strconv.Atoi(r.Header.Get("Last-Event-ID"))
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		events, changed, ended := run.since(after)
		var b bytes.Buffer
		for _, e := range events {
			fmt.Fprintf(&b, "id: %d\nevent: %s\n", e.ID, e.Type)
			for line := range bytes.Lines(e.Data) { // a line break in data needs a data: line of its own
				fmt.Fprintf(&b, "data: %s\n", bytes.TrimRight(line, "\r\n"))
			}
			b.WriteString("\n")
			after = e.ID
		}
		if b.Len() > 0 {
			if _, err := w.Write(b.Bytes()); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
		if ended {
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		case <-keepAlive.C:
			if _, err := io.WriteString(w, ": still running\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

// newRunID is a run's id: when it started (UTC) and four random characters.
func newRunID(now time.Time) string {
	return now.UTC().Format("20060102-150405") + "-" + strings.ToLower(rand.Text()[:4])
}

var errBusy = errors.New("a run is going")
