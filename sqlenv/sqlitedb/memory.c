// The allocator SQLite uses in this process; see memory.h and memory.go.
#include <malloc.h>
#include <stdlib.h>

#include "memory.h"

int sqlite3_config(int op, ...);
int sqlite3_initialize(void);
int sqlite3_shutdown(void);

// SQLite's sqlite3_mem_methods.
typedef struct {
	void *(*xMalloc)(int);
	void (*xFree)(void *);
	void *(*xRealloc)(void *, int);
	int (*xSize)(void *);
	int (*xRoundup)(int);
	int (*xInit)(void *);
	void (*xShutdown)(void *);
	void *pAppData;
} gs_mem_methods;

#define GS_HDR 16 // size and slot before each block; keeps 8-byte alignment

gs_budget gs_budgets[GS_SLOTS];
__thread int gs_slot;

static void *gs_malloc(int n) {
	int slot = gs_slot;
	if (slot > 0) {
		gs_budget *b = &gs_budgets[slot];
		gs_int64 live = __atomic_add_fetch(&b->live, n, __ATOMIC_RELAXED);
		gs_int64 used = live - b->base;
		if (b->limit > 0 && used > b->limit) {
			__atomic_sub_fetch(&b->live, n, __ATOMIC_RELAXED);
			b->over = 1;
			return NULL;
		}
		if (used > b->peak) {
			b->peak = used;
		}
	}
	char *p = malloc((size_t)n + GS_HDR);
	if (!p) {
		if (slot > 0) {
			__atomic_sub_fetch(&gs_budgets[slot].live, n, __ATOMIC_RELAXED);
		}
		return NULL;
	}
	((gs_int64 *)p)[0] = n;
	((gs_int64 *)p)[1] = slot;
	return p + GS_HDR;
}

static void gs_free(void *q) {
	if (!q) {
		return;
	}
	char *p = (char *)q - GS_HDR;
	gs_int64 n = ((gs_int64 *)p)[0], slot = ((gs_int64 *)p)[1];
	if (slot > 0 && slot < GS_SLOTS) {
		__atomic_sub_fetch(&gs_budgets[slot].live, n, __ATOMIC_RELAXED);
	}
	free(p);
}

static void *gs_realloc(void *q, int n) {
	if (!q) {
		return gs_malloc(n);
	}
	char *p = (char *)q - GS_HDR;
	gs_int64 old = ((gs_int64 *)p)[0], slot = ((gs_int64 *)p)[1];
	gs_int64 grow = n - old;
	gs_budget *b = slot > 0 && slot < GS_SLOTS ? &gs_budgets[slot] : NULL;
	if (b && grow > 0 && slot == gs_slot && b->limit > 0 && b->live + grow - b->base > b->limit) {
		b->over = 1;
		return NULL;
	}
	char *np = realloc(p, (size_t)n + GS_HDR);
	if (!np) {
		return NULL;
	}
	((gs_int64 *)np)[0] = n;
	if (b) {
		gs_int64 live = __atomic_add_fetch(&b->live, grow, __ATOMIC_RELAXED);
		if (slot == gs_slot && live - b->base > b->peak) {
			b->peak = live - b->base;
		}
	}
	return np + GS_HDR;
}

static int gs_size(void *q) { return q ? (int)((gs_int64 *)((char *)q - GS_HDR))[0] : 0; }
static int gs_roundup(int n) { return (n + 7) & ~7; }
static int gs_init(void *p) { (void)p; return 0; }
static void gs_shutdown(void *p) { (void)p; }

// gs_install_allocator makes SQLite allocate through the functions above
// (SQLITE_CONFIG_MALLOC); it must run before any connection is open. It
// also keeps glibc from holding freed memory: large blocks (sorts, big
// rows) are mmapped and unmapped when freed, at most two malloc arenas
// serve the threads cgo calls run on, and the heap's free top is returned.
int gs_install_allocator(void) {
	static gs_mem_methods m = {gs_malloc, gs_free, gs_realloc, gs_size, gs_roundup, gs_init, gs_shutdown, 0};
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
	mallopt(M_ARENA_MAX, 2);
	sqlite3_shutdown();
	int rc = sqlite3_config(4, &m); // SQLITE_CONFIG_MALLOC
	int rc2 = sqlite3_initialize();
	return rc ? rc : rc2;
}

// gs_begin starts a query on slot's connection with an allowance of limit
// bytes beyond what the connection holds now.
void gs_begin(int slot, gs_int64 limit) {
	gs_budget *b = &gs_budgets[slot];
	b->base = __atomic_load_n(&b->live, __ATOMIC_RELAXED);
	b->limit = limit;
	b->peak = 0;
	b->over = 0;
}

// gs_reset gives a slot to a new connection.
void gs_reset(int slot) {
	gs_budget *b = &gs_budgets[slot];
	__atomic_store_n(&b->live, 0, __ATOMIC_RELAXED);
	b->base = b->limit = b->peak = 0;
	b->over = 0;
}

