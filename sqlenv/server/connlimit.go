package server

import (
	"log/slog"
	"net"
	"sync"
)

// clientLimit is a listener that keeps at most max connections open per
// client IP address: a connection beyond it is closed as soon as it is
// accepted, so one client cannot hold every file descriptor.
type clientLimit struct {
	net.Listener
	max int
	log *slog.Logger

	trusted func(ip string) bool

	mu   sync.Mutex
	open map[string]int
}

// newClientLimit caps the open connections of each peer address at max,
// except those of trusted proxies (they carry many clients).
func newClientLimit(l net.Listener, max int, log *slog.Logger, trusted func(ip string) bool) net.Listener {
	if max <= 0 {
		return l
	}
	return &clientLimit{Listener: l, max: max, log: log, open: map[string]int{}, trusted: trusted}
}

// Accept returns the next connection within its client's limit.
func (l *clientLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := remoteIP(c)
		if l.trusted != nil && l.trusted(ip) {
			return c, nil
		}
		l.mu.Lock()
		if l.open[ip] >= l.max {
			l.mu.Unlock()
			l.log.Debug("connection refused: the client has too many open", "max_conns_per_client", l.max)
			c.Close()
			continue
		}
		l.open[ip]++
		l.mu.Unlock()
		return &limitedConn{Conn: c, release: func() { l.release(ip) }}, nil
	}
}

func (l *clientLimit) release(ip string) {
	l.mu.Lock()
	if l.open[ip]--; l.open[ip] <= 0 {
		delete(l.open, ip)
	}
	l.mu.Unlock()
}

func remoteIP(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return c.RemoteAddr().String()
}

// limitedConn gives its slot back once, when closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// Close closes the connection and gives its slot back (once).
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
