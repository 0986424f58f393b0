package server

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

// metrics are the server's counters. /metrics serves them with the Go
// runtime's (go_*) and the process' (process_*) standard collectors from
// the server's own registry, so that two servers in one process never share
// values.
//
// The hot paths only add to atomics; the sqlenv_* families are built from
// them when Prometheus scrapes (metrics implements prometheus.Collector).
type metrics struct {
	resets  atomic.Uint64
	expired atomic.Uint64
	evicted atomic.Uint64
	steps   map[sqlenv.ActionType]*atomic.Uint64 // fixed keys: sqlenv.ActionTypes
	opened  map[string]*atomic.Uint64            // fixed keys: transports
	errors  map[Code]*atomic.Uint64              // fixed keys: every code in statusOf
	latency prometheus.Histogram

	// sessions returns the open session count by transport.
	sessions func() map[string]int

	registry *prometheus.Registry
	handler  http.Handler
}

var transports = []string{transportHTTP, transportWS}

var (
	descSessions = prometheus.NewDesc("sqlenv_sessions",
		"Open environment sessions by transport.", []string{"transport"}, nil)
	descOpened = prometheus.NewDesc("sqlenv_sessions_opened_total",
		"Sessions opened by transport.", []string{"transport"}, nil)
	descExpired = prometheus.NewDesc("sqlenv_sessions_expired_total",
		"Sessions closed after IdleTimeout without a request.", nil, nil)
	descEvicted = prometheus.NewDesc("sqlenv_sessions_evicted_total",
		"Idle HTTP sessions closed to make room for a new session at capacity.", nil, nil)
	descResets = prometheus.NewDesc("sqlenv_resets_total", "Episodes started.", nil, nil)
	descSteps  = prometheus.NewDesc("sqlenv_steps_total",
		"Steps executed by action type.", []string{"action_type"}, nil)
	descErrors = prometheus.NewDesc("sqlenv_errors_total",
		"Protocol errors returned, by code.", []string{"code"}, nil)
)

// newMetrics returns the counters, registered with the standard Go and
// process collectors. sessions reports the open sessions by transport.
func newMetrics(sessions func() map[string]int) *metrics {
	m := &metrics{
		steps:    map[sqlenv.ActionType]*atomic.Uint64{},
		opened:   map[string]*atomic.Uint64{},
		errors:   map[Code]*atomic.Uint64{},
		sessions: sessions,
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sqlenv_step_duration_seconds",
			Help:    "Time the environment took per step.",
			Buckets: []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}),
		registry: prometheus.NewRegistry(),
	}
	for _, t := range sqlenv.ActionTypes {
		m.steps[t] = new(atomic.Uint64)
	}
	for _, t := range transports {
		m.opened[t] = new(atomic.Uint64)
	}
	for c := range statusOf { // every code appears, at 0, from the start
		m.errors[c] = new(atomic.Uint64)
	}
	m.registry.MustRegister(m, m.latency,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
	return m
}

func (m *metrics) step(t sqlenv.ActionType, d time.Duration) {
	if c, ok := m.steps[normalizeType(string(t))]; ok {
		c.Add(1)
	}
	m.latency.Observe(d.Seconds())
}

func (m *metrics) error(c Code) {
	if n, ok := m.errors[c]; ok {
		n.Add(1)
	}
}

func (m *metrics) sessionOpened(transport string) {
	if n, ok := m.opened[transport]; ok {
		n.Add(1)
	}
}

// Describe implements prometheus.Collector.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSessions, descOpened, descExpired, descEvicted, descResets, descSteps, descErrors} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, n *atomic.Uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(n.Load()), labels...)
	}
	open := m.sessions()
	for _, t := range transports {
		ch <- prometheus.MustNewConstMetric(descSessions, prometheus.GaugeValue, float64(open[t]), t)
		counter(descOpened, m.opened[t], t)
	}
	counter(descExpired, &m.expired)
	counter(descEvicted, &m.evicted)
	counter(descResets, &m.resets)
	for _, t := range sqlenv.ActionTypes {
		counter(descSteps, m.steps[t], string(t))
	}
	for c, n := range m.errors {
		counter(descErrors, n, string(c))
	}
}
