package msvc

import "testing"

// BenchmarkCorpus demangles every decorated name of the corpus in both
// styles.
func BenchmarkCorpus(b *testing.B) {
	var names []string
	for _, p := range readPairs(&testing.T{}, "testdata/undname.txt.gz") {
		names = append(names, p[0])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, n := range names {
			Demangle(n, Full)
			Demangle(n, Mozilla)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(names)*2), "ns/name")
}
