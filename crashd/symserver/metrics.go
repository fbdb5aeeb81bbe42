package symserver

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the symbol server's Prometheus metrics.
type metrics struct {
	uploads   *prometheus.CounterVec
	bytes     prometheus.Counter
	downloads *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "crashd_symbols_uploads_total",
			Help: "Symbol files uploaded, by protocol (v1, v2, tecken) and result (stored, duplicate, refused)."}, []string{"protocol", "result"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "crashd_symbols_stored_bytes_total",
			Help: "Bytes of .sym files stored (new or changed)."}),
		downloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "crashd_symbols_downloads_total",
			Help: "Symbol file downloads, by result (found, not_found)."}, []string{"result"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.uploads, m.bytes, m.downloads} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// protocol names the upload protocol of a request's path.
func protocol(r *http.Request) string {
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/v1/"):
		return "v2"
	case strings.HasPrefix(p, "/upload"):
		return "tecken"
	}
	return "v1"
}

// stored counts an upload's outcome.
func (s *Server) stored(r *http.Request, st Stored) {
	if st.Duplicate {
		s.m.uploads.WithLabelValues(protocol(r), "duplicate").Inc()
		return
	}
	s.m.uploads.WithLabelValues(protocol(r), "stored").Inc()
	s.m.bytes.Add(float64(st.Size))
}
