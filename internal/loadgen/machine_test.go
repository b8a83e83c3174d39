package loadgen

import "testing"

func TestParseCPUTicks(t *testing.T) {
	t.Parallel()
	total, steal, err := parseCPUTicks([]byte("cpu  100 5 50 800 10 0 5 30 7 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n"))
	if err != nil || total != 1000 || steal != 30 {
		t.Fatalf("parseCPUTicks = %d, %d, %v; want 1000, 30, nil", total, steal, err)
	}
	if _, _, err := parseCPUTicks([]byte("intr 1 2 3\n")); err == nil {
		t.Fatal("parseCPUTicks of a file without a cpu line: no error")
	}
}

func TestProcField(t *testing.T) {
	t.Parallel()
	cpuinfo := []byte("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu\n")
	if got := procField(cpuinfo, "model name"); got != "AMD EPYC" {
		t.Errorf("model name = %q", got)
	}
	if got := procField([]byte("# Server\r\nredis_version:7.0.15\r\n"), "redis_version"); got != "7.0.15" {
		t.Errorf("redis_version = %q", got)
	}
}
