package httpapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics counts requests by route and status and records latency.
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inFlight prometheus.Gauge
	// bodiesReading, bodiesWaiting and bodyBytes count the API request
	// bodies being read into memory, those of them waiting for the
	// memory budget, and the bytes their buffers hold (see readBody).
	bodiesReading, bodiesWaiting, bodyBytes prometheus.Gauge

	mu     sync.RWMutex
	series map[seriesKey]series // the vectors' children, looked up once
}

// seriesKey names one request counter.
type seriesKey struct {
	route, method string
	status        int
}

// series is a request counter and its route's latency histogram.
type series struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// NewMetrics returns metrics registered on a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "forgeapi_http_requests_total", Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "forgeapi_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "forgeapi_http_requests_in_flight", Help: "HTTP requests being served now.",
		}),
		bodiesReading: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "forgeapi_http_request_bodies_reading", Help: "API request bodies being read into memory now.",
		}),
		bodiesWaiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "forgeapi_http_request_bodies_waiting", Help: "API request bodies waiting for the memory budget of bodies being read.",
		}),
		bodyBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "forgeapi_http_request_body_buffer_bytes", Help: "Bytes of memory held by the API request bodies being read now.",
		}),
		series: map[seriesKey]series{},
	}
	m.registry.MustRegister(m.requests, m.latency, m.inFlight, m.bodiesReading, m.bodiesWaiting, m.bodyBytes,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// Registry is where other components register their metrics.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// begin counts a request in flight until end.
func (m *Metrics) begin() {
	if m != nil {
		m.inFlight.Inc()
	}
}

func (m *Metrics) end() {
	if m != nil {
		m.inFlight.Dec()
	}
}

// bodyReading adds n to the bodies being read.
func (m *Metrics) bodyReading(n int) {
	if m != nil {
		m.bodiesReading.Add(float64(n))
	}
}

// bodyWaiting adds n to the bodies waiting for the budget.
func (m *Metrics) bodyWaiting(n int) {
	if m != nil {
		m.bodiesWaiting.Add(float64(n))
	}
}

// bodyBuffered adds n to the bytes the bodies being read hold.
func (m *Metrics) bodyBuffered(n int64) {
	if m != nil {
		m.bodyBytes.Add(float64(n))
	}
}

// Observe records one request. An empty route means no route matched.
func (m *Metrics) Observe(route, method string, status int, d time.Duration) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	if status == 0 {
		status = http.StatusOK
	}
	s := m.seriesFor(seriesKey{route, method, status})
	s.requests.Inc()
	s.latency.Observe(d.Seconds())
}

// seriesFor returns the key's counter and histogram, from the vectors
// the first time (as many series as the vectors themselves hold).
func (m *Metrics) seriesFor(k seriesKey) series {
	m.mu.RLock()
	s, ok := m.series[k]
	m.mu.RUnlock()
	if ok {
		return s
	}
	s = series{
		requests: m.requests.WithLabelValues(k.route, k.method, strconv.Itoa(k.status)),
		latency:  m.latency.WithLabelValues(k.route),
	}
	m.mu.Lock()
	m.series[k] = s
	m.mu.Unlock()
	return s
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}
