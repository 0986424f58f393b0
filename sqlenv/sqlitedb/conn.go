package sqlitedb

/*
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

// SQLite's C API, the few functions this file uses, declared by hand: the
// library is the one github.com/mattn/go-sqlite3 compiles in, so there is
// one SQLite in the process (with go-sqlite3's -tags libsqlite3 these would
// resolve against the system library; that build is not tested).
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef long long gs_int64;
int sqlite3_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs);
int sqlite3_close_v2(sqlite3 *db);
int sqlite3_limit(sqlite3 *db, int id, int value);
int sqlite3_exec(sqlite3 *db, const char *sql, void *callback, void *arg, char **errmsg);
int sqlite3_set_authorizer(sqlite3 *db, int (*auth)(void*, int, const char*, const char*, const char*, const char*), void *arg);
void sqlite3_progress_handler(sqlite3 *db, int n, int (*progress)(void*), void *arg);
int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int n, sqlite3_stmt **stmt, const char **tail);
int sqlite3_stmt_readonly(sqlite3_stmt *stmt);
int sqlite3_bind_parameter_count(sqlite3_stmt *stmt);
const char *sqlite3_bind_parameter_name(sqlite3_stmt *stmt, int i);
int sqlite3_column_count(sqlite3_stmt *stmt);
const char *sqlite3_column_name(sqlite3_stmt *stmt, int i);
int sqlite3_step(sqlite3_stmt *stmt);
int sqlite3_column_type(sqlite3_stmt *stmt, int i);
gs_int64 sqlite3_column_int64(sqlite3_stmt *stmt, int i);
double sqlite3_column_double(sqlite3_stmt *stmt, int i);
const unsigned char *sqlite3_column_text(sqlite3_stmt *stmt, int i);
const void *sqlite3_column_blob(sqlite3_stmt *stmt, int i);
int sqlite3_column_bytes(sqlite3_stmt *stmt, int i);
int sqlite3_finalize(sqlite3_stmt *stmt);
void sqlite3_interrupt(sqlite3 *db);
const char *sqlite3_errmsg(sqlite3 *db);
const char *sqlite3_errstr(int code);

#include "memory.h"

// gs_guard is a connection's authorizer state: the SQL functions it allows
// (lower case, sorted) and the first action it refused.
typedef struct {
	const char *const *functions;
	int nfunctions;
	int refused;    // action code of the first refusal, -1 when none
	char arg[256];  // the table, pragma or function it named
	int stop;       // set (atomically) to stop the running statement
	gs_int64 steps;     // virtual-machine instructions of the running query (in units of 256)
	gs_int64 max_steps; // its budget (0: none)
	int over_steps;     // the query was stopped at its budget
	gs_int64 cpu_ns;     // CPU time of the running query's finished gs_step calls
	gs_int64 max_cpu_ns; // its budget (0: none)
	gs_int64 call_start; // the thread's CPU clock when counting of the current gs_step call began (0: not counting)
	int ticks;           // gs_progress calls, to read the clock every 64th
	int over_cpu;        // the query was stopped at its CPU budget
} gs_guard;

// gs_thread_ns is the calling thread's CPU time in nanoseconds. A query's
// CPU time is summed over its gs_step calls, each on one thread (Go may run
// the next call on another), so it counts the query's own work only,
// whatever else the machine runs.
static gs_int64 gs_thread_ns(void) {
	struct timespec ts;
#ifdef CLOCK_THREAD_CPUTIME_ID
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) {
		return (gs_int64)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	}
#endif
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (gs_int64)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int gs_compare(const void *key, const void *elem) {
	return strcmp((const char *)key, *(const char *const *)elem);
}

static int gs_refuse(gs_guard *g, int action, const char *arg) {
	if (g->refused < 0) {
		g->refused = action;
		g->arg[0] = 0;
		if (arg) {
			strncpy(g->arg, arg, sizeof g->arg - 1);
			g->arg[sizeof g->arg - 1] = 0;
		}
	}
	return 1; // SQLITE_DENY
}

// gs_authorize allows reads of user tables, SELECT, recursive CTEs and the
// whitelisted functions; everything else is refused (see authorizer in
// guard.go for the policy). It runs inside sqlite3_prepare, in C, so a
// statement's dozens of checks cost no calls into Go.
static int gs_authorize(void *p, int action, const char *a1, const char *a2, const char *db, const char *trigger) {
	gs_guard *g = p;
	switch (action) {
	case 20: // SQLITE_READ: a1 is the table
		if (a1 && (strncasecmp(a1, "sqlite_", 7) == 0 || strcasecmp(a1, "dbstat") == 0)) {
			return gs_refuse(g, action, a1);
		}
		return 0;
	case 21: // SQLITE_SELECT
	case 33: // SQLITE_RECURSIVE
		return 0;
	case 31: { // SQLITE_FUNCTION: a2 is the function
		char name[64];
		size_t n = a2 ? strlen(a2) : 0;
		if (n == 0 || n >= sizeof name) {
			return gs_refuse(g, action, a2);
		}
		for (size_t i = 0; i <= n; i++) {
			char c = a2[i];
			name[i] = c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
		}
		if (bsearch(name, g->functions, g->nfunctions, sizeof *g->functions, gs_compare)) {
			return 0;
		}
		return gs_refuse(g, action, a2);
	}
	}
	return gs_refuse(g, action, a1);
}

// gs_progress runs every few hundred virtual-machine instructions: a
// statement stops (SQLITE_INTERRUPT) once its stop flag is set. Unlike
// sqlite3_interrupt's flag, which SQLite clears when a statement starts,
// this one holds until Go clears it, so an interrupt that arrives before
// the statement starts still stops it.
static int gs_progress(void *p) {
	gs_guard *g = p;
	if (g->max_steps > 0 && ++g->steps > g->max_steps) {
		g->over_steps = 1;
		return 1;
	}
	// The thread's CPU clock every 64 × 256 instructions (~0.1 ms of work; a
	// read costs ~0.4 µs): the first read in a gs_step call starts counting
	// that call, the next ones check the budget. Cheap queries, whose calls
	// end before a read, never pay for the clock; what a call does before
	// its first read (under 16,384 instructions) is not counted.
	if (g->max_cpu_ns > 0 && (++g->ticks & 63) == 0) {
		gs_int64 now = gs_thread_ns();
		if (g->call_start == 0) {
			g->call_start = now;
		} else if (g->cpu_ns + (now - g->call_start) > g->max_cpu_ns) {
			g->over_cpu = 1;
			return 1;
		}
	}
	return __atomic_load_n(&g->stop, __ATOMIC_RELAXED);
}

static void gs_stop(sqlite3 *db, gs_guard *g) {
	__atomic_store_n(&g->stop, 1, __ATOMIC_RELAXED);
	sqlite3_interrupt(db);
}

static int gs_set_authorizer(sqlite3 *db, gs_guard *g) {
	sqlite3_progress_handler(db, 256, gs_progress, g);
	return sqlite3_set_authorizer(db, gs_authorize, g);
}

// gs_prepare starts a query on slot's memory account (gs_begin) with
// heap_limit bytes, prepares the first statement of sql and reports whether it is
// read-only, how many parameters it has (and the first name among them,
// NULL when all are plain "?"), how many columns (at most cap) and their names.
static int gs_prepare(int slot, gs_int64 heap_limit, sqlite3 *db, const char *sql, int n, sqlite3_stmt **stmt, int *readonly, int *nparams, const char **param, int *ncols, const char **names, int cap) {
	const char *tail;
	if (slot > 0) {
		gs_begin(slot, heap_limit);
	}
	gs_slot = slot;
	int rc = sqlite3_prepare_v2(db, sql, n, stmt, &tail);
	gs_slot = 0;
	if (rc == 0 && *stmt) {
		*readonly = sqlite3_stmt_readonly(*stmt);
		*nparams = sqlite3_bind_parameter_count(*stmt);
		*param = 0;
		for (int i = 1; i <= *nparams && !*param; i++) {
			*param = sqlite3_bind_parameter_name(*stmt, i);
		}
		*ncols = sqlite3_column_count(*stmt);
		for (int i = 0; i < *ncols && i < cap; i++) {
			names[i] = sqlite3_column_name(*stmt, i);
		}
	}
	return rc;
}

// gs_cell is one value of a row, as SQLite holds it until the next step.
typedef struct {
	gs_int64 i;
	double f;
	const void *p;
	int type;  // SQLITE_INTEGER 1, FLOAT 2, TEXT 3, BLOB 4, NULL 5
	int n;     // bytes of a text or blob
} gs_cell;

// gs_step steps stmt and, on a row, reads its n values into cells: one
// call from Go per row. When there is no row (done or an error), it
// finalizes stmt; the connection keeps the error message.
static int gs_step_row(sqlite3_stmt *stmt, int n, gs_cell *cells);

static int gs_step(int slot, gs_guard *g, sqlite3_stmt *stmt, int n, gs_cell *cells) {
	gs_slot = slot;
	int rc = gs_step_row(stmt, n, cells);
	if (g->call_start != 0) { // gs_progress started counting this call
		g->cpu_ns += gs_thread_ns() - g->call_start;
		g->call_start = 0;
	}
	gs_slot = 0;
	return rc;
}

static int gs_step_row(sqlite3_stmt *stmt, int n, gs_cell *cells) {
	int rc = sqlite3_step(stmt);
	if (rc != 100) { // SQLITE_ROW
		sqlite3_finalize(stmt);
		return rc;
	}
	for (int i = 0; i < n; i++) {
		gs_cell *c = &cells[i];
		c->type = sqlite3_column_type(stmt, i);
		c->n = 0;
		switch (c->type) {
		case 1:
			c->i = sqlite3_column_int64(stmt, i);
			break;
		case 2:
			c->f = sqlite3_column_double(stmt, i);
			break;
		case 3:
			c->p = sqlite3_column_text(stmt, i);
			if (!c->p) {
				sqlite3_finalize(stmt);
				return 7; // SQLITE_NOMEM
			}
			c->n = sqlite3_column_bytes(stmt, i);
			break;
		case 4:
			c->p = sqlite3_column_blob(stmt, i);
			c->n = sqlite3_column_bytes(stmt, i);
			break;
		}
	}
	return rc;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// SQLite constants used here (sqlite3.h).
const (
	sqliteOK        = 0
	sqliteNomem     = 7
	sqliteInterrupt = 9
	sqliteTooBig    = 18
	sqliteMismatch  = 20
	sqliteRow       = 100
	sqliteDone      = 101

	sqliteInteger = 1
	sqliteFloat   = 2
	sqliteText    = 3
	sqliteBlob    = 4

	openReadOnly = 0x00000001
	openURI      = 0x00000040
	openNoMutex  = 0x00008000

	limitLength    = 0
	limitSQLLength = 1
	limitColumn    = 2
	// limitLikePattern is SQLITE_LIMIT_LIKE_PATTERN_LENGTH.
	limitLikePattern = 8
	limitAttached    = 7
)

// sqliteError is an error SQLite reported: its primary result code and
// message.
type sqliteError struct {
	code  int
	msg   string
	cause error // errProcessMemory, or nil
}

// Error returns SQLite's message.
func (e *sqliteError) Error() string { return e.msg }

// Unwrap returns the cause, if known.
func (e *sqliteError) Unwrap() error { return e.cause }

// errProcessMemory marks an out-of-memory failure caused by the
// process-wide limit (other connections' memory), not the query's own.
var errProcessMemory = errors.New("process-wide SQLite memory limit")

// sqliteCode returns the SQLite result code of err, or -1.
func sqliteCode(err error) int {
	var se *sqliteError
	if errors.As(err, &se) {
		return se.code
	}
	return -1
}

// functionList is allowedFunctions for the C authorizer: lower case,
// sorted, allocated once for the life of the process.
var functionList = sync.OnceValue(func() []*C.char {
	names := make([]string, 0, len(allowedFunctions))
	for n := range allowedFunctions {
		names = append(names, n)
	}
	slices.Sort(names) // byte order, as strcmp compares
	list := (*[1 << 16]*C.char)(C.malloc(C.size_t(len(names)) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))[:len(names):len(names)]
	for i, n := range names {
		list[i] = C.CString(n)
	}
	return list
})

// conn is one SQLite connection to a database, used by one query at a
// time, with its authorizer, its row buffer and its deadline.
type conn struct {
	db    *C.sqlite3
	guard *C.gs_guard
	cells *C.gs_cell // MaxColumns values of the current row
	names **C.char   // MaxColumns column names
	ncap  int        // capacity of cells and names
	idle  time.Time  // when it was last put back in the pool
	limit Limits
	slot  C.int // its memory account (memory.go); 0: none free, the process-wide limit only

	mu      sync.Mutex
	running bool
	stopped error // why the running query was interrupted, if it was
	timer   *time.Timer
}

// errTimedOut marks a query interrupted at its timeout.
var errTimedOut = errors.New("timed out")

// errTooMuchWork marks a query stopped at its step budget.
var errTooMuchWork = errors.New("too much work")

// errCPUTime marks a query stopped at its CPU-time budget (Limits.Timeout).
var errCPUTime = errors.New("out of CPU time")

// wallBackstop is how many times its CPU-time budget a query may take in
// wall-clock time before it is interrupted anyway: the backstop for a
// machine so busy that the query's thread barely runs.
const wallBackstop = 3

// openConn opens a read-only, immutable connection to the database at
// path with the limits set and the authorizer installed.
func openConn(path string, limits Limits) (*conn, error) {
	curi := C.CString(dsn(path))
	defer C.free(unsafe.Pointer(curi))
	c := &conn{ncap: limits.MaxColumns, limit: limits, slot: C.int(takeSlot())}
	if rc := C.sqlite3_open_v2(curi, &c.db, openReadOnly|openURI|openNoMutex, nil); rc != sqliteOK {
		err := c.lastError(int(rc))
		c.close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// No other database may be attached (ATTACH is refused by the authorizer too).
	C.sqlite3_limit(c.db, limitAttached, 0)
	C.sqlite3_limit(c.db, limitLength, C.int(limits.MaxValueLength))
	C.sqlite3_limit(c.db, limitSQLLength, C.int(limits.MaxSQLLength))
	C.sqlite3_limit(c.db, limitColumn, C.int(limits.MaxColumns))
	C.sqlite3_limit(c.db, limitLikePattern, C.int(limits.MaxPatternLength))
	// Sorts and temporary tables stay in memory, under the query's memory limit.
	if err := c.exec("PRAGMA temp_store = MEMORY"); err != nil {
		c.close()
		return nil, fmt.Errorf("configure connection to %s: %w", path, err)
	}
	setProcessHeapLimit(limits.HeapLimit)
	fns := functionList()
	c.guard = (*C.gs_guard)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gs_guard{}))))
	c.guard.functions = (**C.char)(unsafe.Pointer(&fns[0]))
	c.guard.nfunctions = C.int(len(fns))
	c.guard.refused = -1
	c.cells = (*C.gs_cell)(C.calloc(C.size_t(c.ncap), C.size_t(unsafe.Sizeof(C.gs_cell{}))))
	c.names = (**C.char)(C.calloc(C.size_t(c.ncap), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	if rc := C.gs_set_authorizer(c.db, c.guard); rc != sqliteOK {
		err := c.lastError(int(rc))
		c.close()
		return nil, fmt.Errorf("configure connection to %s: %w", path, err)
	}
	c.timer = time.AfterFunc(time.Hour, func() { c.interrupt(errTimedOut) })
	c.timer.Stop()
	return c, nil
}

// exec runs trusted SQL that returns no rows.
func (c *conn) exec(sql string) error {
	cs := C.CString(sql)
	defer C.free(unsafe.Pointer(cs))
	if rc := C.sqlite3_exec(c.db, cs, nil, nil, nil); rc != sqliteOK {
		return c.lastError(int(rc))
	}
	return nil
}

// lastError is the connection's error for result code rc.
func (c *conn) lastError(rc int) error {
	var msg string
	if c.db != nil {
		msg = C.GoString(C.sqlite3_errmsg(c.db))
	} else {
		msg = C.GoString(C.sqlite3_errstr(C.int(rc)))
	}
	return &sqliteError{code: rc & 0xff, msg: msg}
}

// failed is the error of a query that failed with result code rc: what the
// authorizer refused (SQLite says only "not authorized"; table-valued
// pragmas are refused when stepped), or SQLite's error.
func (c *conn) failed(rc int) error {
	if c.guard.refused >= 0 {
		return refusal(int(c.guard.refused), C.GoString(&c.guard.arg[0]))
	}
	return c.lastError(rc)
}

func (c *conn) close() {
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.db != nil {
		C.sqlite3_close_v2(c.db)
		c.db = nil
	}
	if c.slot > 0 {
		giveSlot(int(c.slot))
		c.slot = 0
	}
	C.free(unsafe.Pointer(c.guard))
	C.free(unsafe.Pointer(c.cells))
	C.free(unsafe.Pointer(c.names))
	c.guard, c.cells, c.names = nil, nil, nil
}

// interrupt stops the running query, if one is running, and records why.
func (c *conn) interrupt(why error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running && c.stopped == nil {
		c.stopped = why
		C.gs_stop(c.db, c.guard)
	}
}

// start marks a query as running: interrupted after timeout (> 0) or when
// ctx is done, even before it starts stepping (the stop flag that
// gs_progress reads holds until the next start). finish must be called when
// it is over; it returns why the query was interrupted (the caller's
// context's error when that context has ended, even if the timer fired
// first), or nil.
func (c *conn) start(ctx context.Context, timeout time.Duration) (finish func() error) {
	c.mu.Lock()
	c.running, c.stopped = true, nil
	atomic.StoreInt32((*int32)(unsafe.Pointer(&c.guard.stop)), 0)
	c.guard.steps, c.guard.over_steps = 0, 0
	c.guard.max_steps = C.gs_int64((c.limit.MaxSteps + 255) / 256)
	c.guard.cpu_ns, c.guard.call_start, c.guard.ticks, c.guard.over_cpu = 0, 0, 0, 0
	c.guard.max_cpu_ns = C.gs_int64(timeout) // 0: none
	c.mu.Unlock()
	if timeout > 0 {
		c.timer.Reset(wallBackstop * timeout)
	}
	stopCtx := func() bool { return false }
	if ctx.Done() != nil {
		stopCtx = context.AfterFunc(ctx, func() { c.interrupt(ctx.Err()) })
	}
	return func() error {
		c.timer.Stop()
		stopCtx()
		c.mu.Lock()
		defer c.mu.Unlock()
		c.running = false
		if c.stopped == errTimedOut && ctx.Err() != nil {
			// The caller's context ended too: on a starved machine its
			// callback can run after the timer's; the caller's reason is
			// the one it asked for.
			return ctx.Err()
		}
		return c.stopped
	}
}

// query prepares only the first statement of sqlText, checks it (read-only,
// authorized) and reads its rows within the limits.
// A refused statement gives a *RejectedError.
func (c *conn) query(sqlText string) (*Result, error) {
	c.guard.refused = -1
	var stmt *C.sqlite3_stmt
	var readonly, nparams, ncols C.int
	var param *C.char
	rc := C.gs_prepare(c.slot, C.gs_int64(c.limit.HeapLimit), c.db, (*C.char)(unsafe.Pointer(unsafe.StringData(sqlText))), C.int(len(sqlText)),
		&stmt, &readonly, &nparams, &param, &ncols, c.names, C.int(c.ncap))
	if rc != sqliteOK {
		return nil, c.failed(int(rc))
	}
	if stmt == nil {
		return nil, rejectf("empty query: write one SELECT statement")
	}
	finalized := false
	defer func() {
		if !finalized {
			C.sqlite3_finalize(stmt)
		}
	}()
	if readonly == 0 {
		return nil, rejectf("only read-only SELECT queries may run")
	}
	if nparams > 0 {
		name := "?"
		if param != nil {
			name = C.GoString(param)
		}
		return nil, rejectf("the query has a parameter (%s), and nothing binds parameters here: write the value into the SQL (a number, or a string in single quotes)", strings.ToValidUTF8(name, ""))
	}
	n := int(ncols)
	if n > c.ncap { // SQLITE_LIMIT_COLUMN keeps results within ncap
		return nil, fmt.Errorf("result has %d columns; the limit is %d", n, c.ncap)
	}
	res := &Result{Columns: make([]string, n)}
	for i, p := range unsafe.Slice(c.names, max(n, 1))[:n] {
		res.Columns[i] = C.GoString(p)
	}
	cells := unsafe.Slice(c.cells, max(n, 1))[:n]
	size := 0
	for {
		if len(res.Rows) >= c.limit.MaxRows || size >= c.limit.MaxBytes {
			res.Truncated = true
			return res, nil
		}
		rc := C.gs_step(c.slot, c.guard, stmt, ncols, c.cells)
		finalized = rc != sqliteRow
		switch rc {
		case sqliteRow:
		case sqliteDone:
			return res, nil
		default:
			return nil, c.failed(int(rc))
		}
		row := make([]any, n)
		for i := range cells {
			cell := &cells[i]
			switch cell._type {
			case sqliteInteger:
				row[i] = int64(cell.i)
				size += 8
			case sqliteFloat:
				row[i] = float64(cell.f)
				size += 8
			case sqliteText:
				row[i] = C.GoStringN((*C.char)(cell.p), cell.n)
				size += int(cell.n)
			case sqliteBlob:
				row[i] = C.GoBytes(cell.p, cell.n)
				size += int(cell.n)
			default:
				size += 8
			}
		}
		res.Rows = append(res.Rows, row)
	}
}

// pool keeps a database's idle connections for reuse.
type pool struct {
	path        string
	limits      Limits
	maxIdle     int           // most idle connections kept
	maxIdleTime time.Duration // how long an unused connection (and its page cache) is kept

	mu     sync.Mutex
	idle   []*conn // oldest first
	closed bool
}

// get returns an idle connection, or a new one.
func (p *pool) get() (*conn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, fmt.Errorf("database %s is closed", p.path)
	}
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	return openConn(p.path, p.limits)
}

// put returns a connection to the pool, and closes connections unused for
// p.maxIdleTime.
func (p *pool) put(c *conn) {
	now := time.Now()
	p.mu.Lock()
	var stale []*conn
	for len(p.idle) > 0 && now.Sub(p.idle[0].idle) > p.maxIdleTime {
		stale = append(stale, p.idle[0])
		p.idle = p.idle[1:]
	}
	keep := !p.closed && len(p.idle) < p.maxIdle
	if keep {
		c.idle = now
		p.idle = append(p.idle, c)
	}
	p.mu.Unlock()
	if !keep {
		c.close()
	}
	for _, s := range stale {
		s.close()
	}
}

// close closes the idle connections; connections in use are closed when
// they are put back.
func (p *pool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
}

// refusal is the error for an action the authorizer refused: what was
// refused and what is allowed, for the agent.
func refusal(action int, arg string) error {
	arg = strings.ToValidUTF8(arg, "")
	switch action {
	case actionRead:
		return rejectf("reading %s is not allowed: the schema is discovered with DESCRIBE <table> (and SAMPLE <table>)", arg)
	case actionPragma:
		return rejectf("PRAGMA %s is not allowed: the database is read-only, and the schema is discovered with DESCRIBE <table>", arg)
	case actionFunction:
		return rejectf("function %s() is not allowed", arg)
	}
	name, ok := actionNames[action]
	if !ok {
		name = fmt.Sprintf("operation %d", action)
	}
	return rejectf("%s is not allowed: the database is read-only and only SELECT queries may run", name)
}
