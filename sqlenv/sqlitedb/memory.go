package sqlitedb

/*
#include <malloc.h>
#include "memory.h"
gs_int64 sqlite3_hard_heap_limit64(gs_int64 n);
gs_int64 sqlite3_soft_heap_limit64(gs_int64 n);
*/
import "C"

import (
	"fmt"
	"sync"
)

// SQLite has one heap for the whole process. So that one session's heavy
// query cannot make another session's cheap query fail, memory is accounted
// per connection (memory.c): SQLite allocates through an allocator that
// charges each block to the connection whose query runs on the calling
// thread, and a query that would hold more than Limits.HeapLimit beyond what
// its connection held when it started is refused memory — it fails with
// "out of memory" for its own cost, whatever other connections hold. A
// process-wide hard limit (processHeapFactor × HeapLimit) remains as a
// backstop; a query it stops is told that the process, not the query, ran
// out. glibc is told to return large blocks and the heap's free top to the
// system, so that memory a finished query used does not stay resident.

// processHeapFactor × the smallest HeapLimit is the process-wide hard limit.
const processHeapFactor = 8

// installErr is the allocator's installation result (at package init,
// before any connection exists).
var installErr = func() error {
	if rc := C.gs_install_allocator(); rc != 0 {
		return fmt.Errorf("sqlitedb: SQLite refused the per-connection allocator (code %d)", int(rc))
	}
	return nil
}()

// slots hands out the memory accounts of connections (1 … GS_SLOTS-1).
var slots struct {
	mu   sync.Mutex
	free []int
	next int
}

// takeSlot returns an unused account, reset, or 0 when all are taken (the
// connection is then limited by the process-wide limit only).
func takeSlot() int {
	if installErr != nil {
		return 0
	}
	slots.mu.Lock()
	defer slots.mu.Unlock()
	var s int
	switch {
	case len(slots.free) > 0:
		s = slots.free[len(slots.free)-1]
		slots.free = slots.free[:len(slots.free)-1]
	case slots.next+1 < C.GS_SLOTS:
		slots.next++
		s = slots.next
	default:
		return 0
	}
	C.gs_reset(C.int(s))
	return s
}

// giveSlot returns a closed connection's account.
func giveSlot(s int) {
	slots.mu.Lock()
	slots.free = append(slots.free, s)
	slots.mu.Unlock()
}

// queryMemory reports what the last query on slot used: its peak beyond
// what the connection held before, and whether it was refused memory.
func queryMemory(slot C.int) (peak int64, refused bool) {
	if slot <= 0 {
		return 0, false
	}
	b := &C.gs_budgets[slot]
	return int64(b.peak), b.over != 0
}

// trimAfter is the peak of a query after which the heap's free memory is
// given back to the system.
const trimAfter = 8 << 20

// releaseMemory gives freed heap memory back to the system.
func releaseMemory() { C.malloc_trim(0) }

var heapLimitMu sync.Mutex

// setProcessHeapLimit lowers SQLite's process-wide hard heap limit to
// processHeapFactor × limit (never raises it: the smallest limit of all
// databases wins) and sets the soft limit, where SQLite starts reusing its
// page caches, to half of it.
func setProcessHeapLimit(limit int64) {
	heapLimitMu.Lock()
	defer heapLimitMu.Unlock()
	limit *= processHeapFactor
	if current := int64(C.sqlite3_hard_heap_limit64(-1)); current > 0 && current <= limit {
		return
	}
	C.sqlite3_hard_heap_limit64(C.gs_int64(limit))
	C.sqlite3_soft_heap_limit64(C.gs_int64(limit / 2))
}
