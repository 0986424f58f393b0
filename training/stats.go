package training

import "math"

// Summary statistics of float64 samples, for the metrics and the advantages.

// mean is the average of x (0 when empty).
func mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// finite returns the finite values of x.
func finite(x []float64) []float64 {
	var out []float64
	for _, v := range x {
		if isFinite(v) {
			out = append(out, v)
		}
	}
	return out
}

// variance is the unbiased sample variance (0 for fewer than 2 values).
func variance(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - mean) * (v - mean)
	}
	return s / float64(len(x)-1)
}

// MeanStdErr returns the mean of x and its standard error, the unbiased
// sample standard deviation over √n (0 for fewer than 2 values).
func MeanStdErr(x []float64) (m, se float64) {
	if len(x) == 0 {
		return 0, 0
	}
	return mean(x), math.Sqrt(variance(x) / float64(len(x)))
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
