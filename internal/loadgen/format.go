package loadgen

import "fmt"

// The text reports' formats of figures.

func fmtMS(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v < 10:
		return fmt.Sprintf("%.2fms", v)
	case v < 1000:
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.2fs", v/1000)
}

func dashIfZero(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmtMS(v)
}

func fmtRate(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f/s", v)
}

func num(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}
