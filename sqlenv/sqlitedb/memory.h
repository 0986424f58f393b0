// SQLite's memory, accounted per connection (memory.go): every block SQLite
// allocates carries a header with its size and the budget slot of the
// connection whose query was running on this thread, so a query fails for
// its own memory only, whatever other connections hold.
#ifndef GS_MEMORY_H
#define GS_MEMORY_H

typedef long long gs_int64;

#define GS_SLOTS 8192

// gs_budget is one connection's account: bytes its blocks hold now, what
// they held when the running query started, the query's allowance, its
// peak, and whether it was refused memory.
typedef struct {
	gs_int64 live, base, limit, peak;
	int over;
	int pad[7]; // one cache line each
} gs_budget;

extern gs_budget gs_budgets[GS_SLOTS]; // slot 0: no connection's query
extern __thread int gs_slot;           // the slot charged by this thread's SQLite calls

int gs_install_allocator(void);
void gs_begin(int slot, gs_int64 limit);
void gs_reset(int slot);

#endif
