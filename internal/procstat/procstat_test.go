package procstat

import (
	"fmt"
	"os"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	// A command name may hold spaces and parentheses: it runs to the last ")".
	line := "4242 (my (odd) api) T 1 4242 4242 0 -1 4194560 1000 0 0 0 123 45 0 0 20 0 9 0 777 1000000 2000 18446744073709551615\n"
	s, err := Parse([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Stat{Comm: "my (odd) api", State: 'T', Ticks: 168}); s != want || !s.Stopped() {
		t.Errorf("Parse = %+v (stopped %v), want %+v, stopped", s, s.Stopped(), want)
	}
	for _, bad := range []string{"", "4242 api S 1", "4242 (api) S 1 2 3", "4242 (api) S 1 4242 4242 0 -1 4194560 1000 0 0 0 x 45"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}

// TestReadSelf reads this process's own stat in the real /proc: running, under the test
// binary's name (cut to 15 bytes).
func TestReadSelf(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: not Linux")
	}
	s, err := Read(fmt.Sprintf("/proc/%d/stat", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	if s.Comm != "procstat.test" || s.Stopped() {
		t.Errorf("this process: %+v, want procstat.test, not stopped", s)
	}
}
