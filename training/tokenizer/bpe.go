package tokenizer

import (
	"strings"
	"sync"
)

// bpe is a byte-level BPE model: a vocabulary and ranked merges.
type bpe struct {
	vocab  map[string]int32
	tokens []string // id → token (empty for ids the vocabulary does not use)
	// merges maps a pair of token ids to its rank and the merged token id.
	merges map[uint64]merge
	// byteIDs is the id of each byte's byte-level character.
	byteIDs [256]int32
	// ignoreMerges: a pre-token that is a whole vocabulary entry is used as
	// is (Llama-3 style); Qwen's tokenizer.json says false.
	ignoreMerges bool

	cache *wordCache
}

type merge struct {
	rank int32
	id   int32
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// encodeWord appends the ids of one pre-token (raw bytes) to dst.
func (m *bpe) encodeWord(dst []int32, word string) []int32 {
	if ids, ok := m.cache.get(word); ok {
		return append(dst, ids...)
	}
	if m.ignoreMerges {
		if id, ok := m.vocab[byteLevel(word)]; ok {
			m.cache.put(word, []int32{id})
			return append(dst, id)
		}
	}
	syms := make([]int32, len(word))
	for i := 0; i < len(word); i++ {
		syms[i] = m.byteIDs[word[i]]
	}
	syms = m.mergeAll(syms)
	m.cache.put(word, syms)
	return append(dst, syms...)
}

// rescanMaxLen is the longest word merged by rescanning (mergeRescan);
// longer words go through the priority queue (mergeQueued). Both give the
// same tokens; the rescan allocates nothing and is faster on short words.
const rescanMaxLen = 64

// mergeAll applies merges by rank until none applies, in Hugging Face's
// order: lowest rank first, leftmost first among equals.
func (m *bpe) mergeAll(syms []int32) []int32 {
	if len(syms) <= rescanMaxLen {
		return m.mergeRescan(syms)
	}
	return m.mergeQueued(syms)
}

// mergeRescan finds the adjacent pair of lowest rank (leftmost among
// equals), merges every non-overlapping occurrence of it left to right, and
// rescans: O(n²) for a word of n bytes.
func (m *bpe) mergeRescan(syms []int32) []int32 {
	for len(syms) > 1 {
		best, bestAt := merge{rank: -1}, -1
		for i := 0; i+1 < len(syms); i++ {
			if mg, ok := m.merges[pairKey(syms[i], syms[i+1])]; ok && (bestAt < 0 || mg.rank < best.rank) {
				best, bestAt = mg, i
			}
		}
		if bestAt < 0 {
			break
		}
		a, b := syms[bestAt], syms[bestAt+1]
		out := syms[:bestAt]
		for i := bestAt; i < len(syms); {
			if i+1 < len(syms) && syms[i] == a && syms[i+1] == b {
				out = append(out, best.id)
				i += 2
			} else {
				out = append(out, syms[i])
				i++
			}
		}
		syms = out
	}
	return syms
}

// mergeQueued merges as Hugging Face's tokenizers do (Word::merge_all): a
// priority queue holds the adjacent pairs that have a merge, lowest rank
// first and leftmost first among equals; the symbols form a linked list, so
// a merge takes O(log n) and a word of n bytes O(n log n) (rescanning, a
// 100 KB word without pre-token breaks took 10 s to a minute).
func (m *bpe) mergeQueued(syms []int32) []int32 {
	n := len(syms)
	if n < 2 {
		return syms
	}
	// prev[i] and next[i] link the live symbols; a merged-away symbol has
	// dead[i] set. next[i] == n marks the end.
	prev, next := make([]int32, n), make([]int32, n)
	dead := make([]bool, n)
	q := make(mergeQueue, 0, n)
	for i := range syms {
		prev[i], next[i] = int32(i-1), int32(i+1)
		if i+1 < n {
			if mg, ok := m.merges[pairKey(syms[i], syms[i+1])]; ok {
				q = append(q, pendingMerge{rank: mg.rank, pos: int32(i), id: mg.id})
			}
		}
	}
	q.init()
	for len(q) > 0 {
		top := q.pop()
		pos := top.pos
		if dead[pos] || next[pos] == int32(n) {
			continue
		}
		right := next[pos]
		// A stale entry: the pair at pos changed since it was queued.
		if mg, ok := m.merges[pairKey(syms[pos], syms[right])]; !ok || mg.id != top.id {
			continue
		}
		syms[pos] = top.id
		dead[right] = true
		next[pos] = next[right]
		if next[pos] < int32(n) {
			prev[next[pos]] = pos
		}
		if p := prev[pos]; p >= 0 {
			if mg, ok := m.merges[pairKey(syms[p], syms[pos])]; ok {
				q.push(pendingMerge{rank: mg.rank, pos: p, id: mg.id})
			}
		}
		if nx := next[pos]; nx < int32(n) {
			if mg, ok := m.merges[pairKey(syms[pos], syms[nx])]; ok {
				q.push(pendingMerge{rank: mg.rank, pos: pos, id: mg.id})
			}
		}
	}
	out := syms[:0]
	for i := int32(0); i < int32(n); i = next[i] {
		out = append(out, syms[i])
	}
	return out
}

// pendingMerge is a queued merge of the pair starting at symbol pos.
type pendingMerge struct {
	rank, pos, id int32
}

func (a pendingMerge) before(b pendingMerge) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos)
}

// mergeQueue is a binary min-heap of pending merges (by rank, then
// position).
type mergeQueue []pendingMerge

func (q mergeQueue) init() {
	for i := len(q)/2 - 1; i >= 0; i-- {
		q.down(i)
	}
}

func (q *mergeQueue) push(x pendingMerge) {
	*q = append(*q, x)
	h := *q
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h[i].before(h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (q *mergeQueue) pop() pendingMerge {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	*q = h[:last]
	q.down(0)
	return top
}

func (q mergeQueue) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(q) {
			return
		}
		j := l
		if r := l + 1; r < len(q) && q[r].before(q[l]) {
			j = r
		}
		if !q[j].before(q[i]) {
			return
		}
		q[i], q[j] = q[j], q[i]
		i = j
	}
}

// wordCache remembers the ids of pre-tokens; it is safe for concurrent use
// and is emptied when it reaches its capacity.
type wordCache struct {
	mu       sync.RWMutex
	m        map[string][]int32
	capacity int
}

func newWordCache(capacity int) *wordCache {
	return &wordCache{m: make(map[string][]int32), capacity: capacity}
}

func (c *wordCache) get(w string) ([]int32, bool) {
	c.mu.RLock()
	ids, ok := c.m[w]
	c.mu.RUnlock()
	return ids, ok
}

// put remembers the ids of w. The key is a copy: w is usually a slice of
// the caller's text, which the cache must not keep alive.
func (c *wordCache) put(w string, ids []int32) {
	if len(w) > 256 { // long words are rare; do not let them fill the cache
		return
	}
	w = strings.Clone(w)
	c.mu.Lock()
	if len(c.m) >= c.capacity {
		clear(c.m)
	}
	c.m[w] = ids
	c.mu.Unlock()
}
