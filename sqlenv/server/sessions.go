package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

// Transports, as metric labels and in logs.
const (
	transportHTTP = "http"
	transportWS   = "ws"
)

// session is one environment with its own episode: a WebSocket connection,
// or a stateful HTTP session named by its id.
type session struct {
	id        string
	transport string
	client    string // the client's IP address, for MaxSessionsPerClient
	env       sqlenv.Env
	// mu serialises the environment's calls (requests on one HTTP session
	// may overlap; the environment runs one episode step by step).
	mu sync.Mutex
	// lastUsed is the time of the last request (unix nanoseconds).
	lastUsed atomic.Int64
	// inUse counts the HTTP requests holding the session; guarded by
	// registry.mu. A session in use is never expired nor evicted.
	inUse int
	// ws closes a WebSocket session's connection (nil for HTTP).
	ws *wsConn
}

func (s *session) touch(now time.Time) { s.lastUsed.Store(now.UnixNano()) }

// tag names the session in logs without revealing its id (which would let
// whoever reads the logs drive it): the first 8 hex digits of its SHA-256.
func (s *session) tag() string {
	sum := sha256.Sum256([]byte(s.id))
	return hex.EncodeToString(sum[:4])
}

// registry holds the open sessions and enforces MaxSessions.
type registry struct {
	mu       sync.Mutex
	sessions map[string]*session
	reserved int // slots taken by sessions whose environment is being made
	max      int
	// evictAfter is the idle time after which an HTTP session may be
	// evicted at capacity.
	evictAfter time.Duration
	// perClient counts each client's sessions and reserved slots;
	// maxPerClient caps them (0: no cap).
	perClient    map[string]int
	maxPerClient int
	closing      bool
}

func newRegistry(max, maxPerClient int, evictAfter time.Duration) *registry {
	return &registry{sessions: map[string]*session{}, max: max, evictAfter: evictAfter,
		perClient: map[string]int{}, maxPerClient: maxPerClient}
}

// drop deletes s from the registry (r.mu held).
func (r *registry) drop(s *session) {
	delete(r.sessions, s.id)
	r.unclaim(s.client)
}

// unclaim gives back one of client's session slots (r.mu held).
func (r *registry) unclaim(client string) {
	if r.perClient[client]--; r.perClient[client] <= 0 {
		delete(r.perClient, client)
	}
}

// reserve takes a slot for a new session. At capacity it evicts the least
// recently used HTTP session that no request holds and that has been idle
// for evictAfter (returned, removed from the registry, for the caller to
// close): HTTP sessions are leases that OpenEnv's stateless clients never
// release, so abandoned ones must not lock others out, but a session whose
// client is between two steps is never taken. With no such session it
// fails with CAPACITY_REACHED.
func (r *registry) reserve(client string) (evicted *session, e *Error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return nil, errorf(CodeShuttingDown, "the server is shutting down")
	}
	full := len(r.sessions)+r.reserved >= r.max
	clientFull := r.maxPerClient > 0 && r.perClient[client] >= r.maxPerClient
	if full || clientFull {
		idleSince := time.Now().Add(-r.evictAfter).UnixNano()
		for _, s := range r.sessions {
			// A client at its own cap can only make room among its sessions.
			if s.transport == transportHTTP && s.inUse == 0 && s.lastUsed.Load() <= idleSince &&
				(!clientFull || s.client == client) &&
				(evicted == nil || s.lastUsed.Load() < evicted.lastUsed.Load()) {
				evicted = s
			}
		}
		if evicted == nil {
			if full {
				e := errorf(CodeCapacity, "the server has reached its maximum of %d concurrent sessions", r.max)
				e.Fields = map[string]any{"active_sessions": len(r.sessions) + r.reserved, "max_sessions": r.max}
				return nil, e
			}
			e := errorf(CodeCapacity, "this client already has %d sessions, the most one client may open", r.perClient[client])
			e.Fields = map[string]any{"client_sessions": r.perClient[client], "max_sessions_per_client": r.maxPerClient}
			return nil, e
		}
		r.drop(evicted)
	}
	r.reserved++
	r.perClient[client]++
	return evicted, nil
}

// unreserve gives back a slot whose session could not be made.
func (r *registry) unreserve(client string) {
	r.mu.Lock()
	r.reserved--
	r.unclaim(client)
	r.mu.Unlock()
}

// add registers a new session in its reserved slot, held by inUse requests.
// It fails (and frees the slot) when the server began shutting down since.
// When it succeeds it adds 1 to wg (if not nil) under the registry's lock,
// so that the Add happens before a shutdown's Wait (which follows
// startClosing).
func (r *registry) add(s *session, inUse int, wg *sync.WaitGroup) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reserved--
	if r.closing {
		r.unclaim(s.client)
		return false
	}
	s.inUse = inUse
	r.sessions[s.id] = s
	if wg != nil {
		wg.Add(1)
	}
	return true
}

// acquire finds an HTTP session for a request and holds it until release.
// A WebSocket session's id is not an HTTP session id: the two are kept
// apart, so one connection's session cannot be driven over HTTP.
func (r *registry) acquire(id string, now time.Time) (*session, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if !ok || s.transport != transportHTTP {
		return nil, false
	}
	s.inUse++
	s.touch(now)
	return s, true
}

func (r *registry) release(s *session, now time.Time) {
	r.mu.Lock()
	s.inUse--
	s.touch(now)
	r.mu.Unlock()
}

// remove takes s out of the registry; it reports whether s was there.
func (r *registry) remove(s *session) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sessions[s.id] != s {
		return false
	}
	r.drop(s)
	return true
}

// idle returns the sessions unused since cutoff: HTTP sessions no request
// holds are removed from the registry (the caller closes them); WebSocket
// sessions stay until their connection ends.
func (r *registry) idle(cutoff time.Time) (expired, idleWS []*session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := cutoff.UnixNano()
	for _, s := range r.sessions {
		if s.lastUsed.Load() >= c {
			continue
		}
		switch {
		case s.transport == transportWS:
			idleWS = append(idleWS, s)
		case s.inUse == 0:
			r.drop(s)
			expired = append(expired, s)
		}
	}
	return expired, idleWS
}

// counts returns the open sessions by transport.
func (r *registry) counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := map[string]int{transportHTTP: 0, transportWS: 0}
	for _, s := range r.sessions {
		n[s.transport]++
	}
	return n
}

// startClosing refuses new sessions from now on and returns the open ones.
func (r *registry) startClosing() []*session { return r.close(false) }

// takeAll refuses new sessions from now on, and removes and returns every
// session.
func (r *registry) takeAll() []*session { return r.close(true) }

// close refuses new sessions and returns the open ones, removing them from
// the registry when remove is set.
func (r *registry) close(remove bool) []*session {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closing = true
	all := make([]*session, 0, len(r.sessions))
	for _, s := range r.sessions {
		all = append(all, s)
		if remove {
			r.drop(s)
		}
	}
	return all
}

// newSessionID returns 128 random bits in hex.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
