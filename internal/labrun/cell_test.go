package labrun

import (
	"reflect"
	"testing"
	"time"
)

// TestJudge: the verdicts the lab can give, each from the audit it would see, and that a
// cell is OK only when its verdict is the expected one: a broken lock whose flaw did not show
// fails as much as a safe lock that oversold.
func TestJudge(t *testing.T) {
	end := time.Now()
	for _, tc := range []struct {
		name                  string
		initial, stock, order int
		lastSale              time.Time
		want                  string
		oversold              int
	}{
		{"sold out exactly", 10, 0, 10, end, Safe, 0},
		{"more orders than stock", 10, 0, 13, end, Oversold, 3},
		{"lost updates, stock left", 10, 4, 8, end, Oversold, 2},
		{"stock left, nothing sold of late", 10, 7, 3, end.Add(-stallAfter), Stalled, 0},
		{"stock left, still selling", 10, 2, 8, end.Add(-time.Second), Unfinished, 0},
	} {
		c := Cell{InitialStock: tc.initial, Stock: tc.stock, Orders: tc.order}
		judge(&c, tc.lastSale, end)
		if c.Verdict != tc.want || (tc.want == Oversold && c.Oversold != tc.oversold) {
			t.Errorf("%s: verdict %s, oversold %d; want %s, %d", tc.name, c.Verdict, c.Oversold, tc.want, tc.oversold)
		}
		c.Expected = tc.want
		if !c.OK() {
			t.Errorf("%s: not OK although as expected", tc.name)
		}
		c.Expected = Safe
		if tc.want != Safe && c.OK() {
			t.Errorf("%s: OK although expected safe", tc.name)
		}
	}
}

// TestExpectedCoversEveryCell: every lab lock and scenario has an expected result, the short
// matrix names only real cells, and every broken lock shows a flaw in it, or in the partition
// cells of make test (ShortPartition).
func TestExpectedCoversEveryCell(t *testing.T) {
	for _, l := range Locks {
		for _, s := range Scenarios {
			if v := Expected[l][s.Name]; v != Safe && v != Oversold && v != Stalled {
				t.Errorf("%s × %s: expected %q", l, s.Name, v)
			}
		}
	}
	inShort := map[string]bool{}
	for _, p := range ShortCells() {
		if _, ok := cellScenario(p); !ok || Expected[p.Lock] == nil {
			t.Errorf("short cell %v is not in the matrix", p)
		}
		if Expected[p.Lock][p.Scenario] != Safe {
			inShort[p.Lock] = true
		}
	}
	for _, l := range ShortPartition {
		if Expected[l] == nil {
			t.Errorf("short partition cell of %s: no such lock", l)
		}
		if Expected[l]["partition"] != Safe {
			inShort[l] = true
		}
	}
	for _, l := range Locks {
		broken := false
		for _, v := range Expected[l] {
			broken = broken || v != Safe
		}
		if broken && !inShort[l] {
			t.Errorf("%s's flaw is not in the short matrix", l)
		}
	}
}

// TestEtcdCellsOutlastTheLease: the etcd lock's cells ask for a lease etcd grants, what a
// scenario means to outlast the lease (the work, the pause) outlasts it with room for etcd's
// revocation of an expired lease (up to 0.5 s late), and the sale still fits the cell's time;
// every other lock runs the scenarios as written.
func TestEtcdCellsOutlastTheLease(t *testing.T) {
	const ms = time.Millisecond
	for _, sc := range Scenarios {
		s, ok := cellScenario(Pair{Lock: "etcd", Scenario: sc.Name})
		lease := time.Duration(s.LeaseMS) * ms
		if !ok || lease < EtcdMinLease {
			t.Errorf("etcd × %s: lease %v, want at least %v", sc.Name, lease, EtcdMinLease)
		}
		beyond := lease + 500*ms
		if sc.ThinkMS > sc.LeaseMS && time.Duration(s.ThinkMS)*ms <= beyond {
			t.Errorf("etcd × %s: think %d ms does not outlast the %v lease", sc.Name, s.ThinkMS, lease)
		}
		if sc.Pause > time.Duration(sc.LeaseMS)*ms && s.Pause <= beyond {
			t.Errorf("etcd × %s: pause %v does not outlast the %v lease", sc.Name, s.Pause, lease)
		}
		sale := time.Duration(s.Stock*s.ThinkMS)*ms + s.Pause // the work, the pause
		if s.Fault == "kill" {
			sale += beyond // the killed holder's lease runs out
		}
		if sale > cellTimeout*3/4 {
			t.Errorf("etcd × %s: the sale needs about %v of the cell's %v", sc.Name, sale, cellTimeout)
		}
		if other, _ := cellScenario(Pair{Lock: "dlock", Scenario: sc.Name}); !reflect.DeepEqual(other, sc) {
			t.Errorf("dlock × %s runs %+v, want the scenario as written", sc.Name, other)
		}
	}
}

// TestPostgresCellsOutlastTheSession: the postgres locks' partition cell cuts its holder off
// for longer than PostgreSQL takes to end a silent client's session (with room for the
// session's last packet before the cut), with work longer than that too, so that the next
// holder gets the lock while the first still works, and the sale still fits the cell's time;
// their other cells run the scenarios as written, but for what they say.
func TestPostgresCellsOutlastTheSession(t *testing.T) {
	const ms = time.Millisecond
	for _, lock := range []string{"postgres", "postgres-nofence"} {
		for _, sc := range Scenarios {
			s, ok := cellScenario(Pair{Lock: lock, Scenario: sc.Name})
			if !ok {
				t.Fatalf("%s × %s: no cell", lock, sc.Name)
			}
			if sc.Name != "partition" {
				s.What = sc.What
				if !reflect.DeepEqual(s, sc) {
					t.Errorf("%s × %s runs %+v, want the scenario as written", lock, sc.Name, s)
				}
				continue
			}
			beyond := PostgresSessionLoss + 500*ms
			if s.Pause <= beyond || time.Duration(s.ThinkMS)*ms <= beyond {
				t.Errorf("%s × partition: cut %v, work %d ms: want both beyond %v", lock, s.Pause, s.ThinkMS, beyond)
			}
			if sale := time.Duration(s.ThinkMS)*ms + s.Pause; sale > cellTimeout*3/4 {
				t.Errorf("%s × partition: the sale needs about %v of the cell's %v", lock, sale, cellTimeout)
			}
		}
	}
	ka := postgresProbe.KeepAlive
	if got := ka.Idle + time.Duration(ka.Count)*ka.Interval; got != PostgresSessionLoss || postgresProbe.UserTimeout != PostgresSessionLoss {
		t.Errorf("the probes end a silent session after %v, its data unacknowledged after %v; PostgresSessionLoss says %v",
			got, postgresProbe.UserTimeout, PostgresSessionLoss)
	}
}

// TestZooKeeperCellsOutlastTheSession: the zookeeper locks' cells ask for a session of at
// least ZooKeeperMinSession, what a scenario means to outlast the lease (the work, the pause,
// the cut) outlasts the session with room for the ensemble's expiry, a tick late, and the
// failover cell kills the ensemble's leader with the scenario's numbers as written.
func TestZooKeeperCellsOutlastTheSession(t *testing.T) {
	const ms = time.Millisecond
	for _, sc := range Scenarios {
		s, ok := cellScenario(Pair{Lock: "zookeeper-nofence", Scenario: sc.Name})
		session := time.Duration(s.LeaseMS) * ms
		if !ok || session < ZooKeeperMinSession {
			t.Errorf("zookeeper × %s: session %v, want at least %v", sc.Name, session, ZooKeeperMinSession)
		}
		beyond := session + 500*ms // the ensemble's tick
		if sc.ThinkMS > sc.LeaseMS && time.Duration(s.ThinkMS)*ms <= beyond {
			t.Errorf("zookeeper × %s: think %d ms does not outlast the %v session", sc.Name, s.ThinkMS, session)
		}
		if sc.Pause > time.Duration(sc.LeaseMS)*ms && s.Pause <= beyond {
			t.Errorf("zookeeper × %s: pause %v does not outlast the %v session", sc.Name, s.Pause, session)
		}
		if sc.Name == "failover" && (s.ThinkMS != sc.ThinkMS || s.LeaseMS != sc.LeaseMS || s.Stock != sc.Stock) {
			t.Errorf("zookeeper × failover runs %+v, want the scenario's numbers", s)
		}
	}
}
