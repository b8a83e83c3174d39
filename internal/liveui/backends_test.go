package liveui

import (
	"strings"
	"testing"
)

// TestUIEtcdTargets: the etcd targets fixed at start (-etcd-targets) that a run picks become
// compare's -etcd-targets: the run's command line carries them and its items are dlock on
// both backends; without dlock, the command line's refusal is the page's 400.
func TestUIEtcdTargets(t *testing.T) {
	t.Parallel()
	// Targets that never answer: the run waits for their /readyz until it is stopped.
	targets, err := FixedTargets("-targets", "http://127.0.0.1:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	etcdTargets, err := FixedTargets("-etcd-targets", "http://127.0.0.1:2", targets)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := serveTestUI(t, Config{Targets: targets, EtcdTargets: etcdTargets, Limits: DefaultLimits},
		map[string]string{"ADMIN_TOKEN": "ui-test-admin-token"})
	tok := []string{PageTokenHeader, pageToken(t, base)}
	var p uiProblemBody
	refused := `{"kind":"strategies","strategies":["naive"],"stock":5,"buyers":8,"duration_s":1,"etcd_targets":["127.0.0.1:2"]}`
	if got := uiCall(t, "POST", base+"/api/runs", "application/json", refused, &p, tok...); got != 400 || !strings.Contains(p.Detail, "add dlock") {
		t.Errorf("etcd targets without dlock = %d %+v, want 400 naming dlock", got, p)
	}
	var run runInfo
	ok := `{"kind":"strategies","strategies":["dlock","naive"],"stock":5,"buyers":8,"duration_s":1,"etcd_targets":" 127.0.0.1:2 "}`
	if got := uiCall(t, "POST", base+"/api/runs", "application/json", ok, &run, tok...); got != 202 {
		t.Fatalf("POST a run with etcd targets = %d %+v, want 202", got, run)
	}
	defer func() {
		uiCall(t, "POST", base+"/api/runs/"+run.ID+"/stop", "application/json", "", nil, tok...)
		readEvents(t, base+"/api/runs/"+run.ID+"/events") // until its end
	}()
	if !strings.Contains(run.Command, " -etcd-targets http://127.0.0.1:2") {
		t.Errorf("command = %q, want -etcd-targets", run.Command)
	}
	var items []string
	for _, it := range run.Items {
		items = append(items, it.Name)
	}
	if got, want := strings.Join(items, ", "), "dlock (redis), dlock (etcd), naive"; got != want {
		t.Errorf("items %q, want %q", got, want)
	}
}
