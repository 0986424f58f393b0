package verify

import (
	"slices"
	"sync"
	"time"
)

// Test jails outlive the verification that opened them: the program comes
// to init by descriptor (jailCommand.exe), so a jail sees no file of any
// verification, and the next verification with the same limits takes it
// instead of paying for bubblewrap, the namespaces, the mounts and the
// cgroup again. Nothing of one command reaches the next (whichever
// verification it belongs to): init kills every other process of the jail
// and gives /tmp a fresh tmpfs after each command, and the seccomp filter
// refuses what would outlive a process (keyrings, System V and POSIX
// message-queue IPC); the jail keeps its pool uid, whose processes are all
// gone by then. Compile jails, which bind the source and an output
// directory, are not kept.

// At most idleTestJails jails wait, each at most idleTestJailTime.
const (
	idleTestJails    = 4
	idleTestJailTime = 10 * time.Second
)

// pooledJail is an open test jail and the pool uid its commands run as.
type pooledJail struct {
	j               *jail
	uid             int
	release         func() // gives the uid back; only after j has closed
	memory, tmpSize uint64
	timer           *time.Timer // closes it after idleTestJailTime idle
}

// close ends the jail and gives its uid back.
func (pj *pooledJail) close() {
	pj.j.close()
	pj.release()
}

// jailPool holds idle test jails.
type jailPool struct {
	mu   sync.Mutex
	idle []*pooledJail
}

// testJails are the idle test jails of this process.
var testJails jailPool

// get takes an idle jail with these limits, or returns nil.
func (p *jailPool) get(memory, tmpSize uint64) *pooledJail {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.idle) - 1; i >= 0; i-- {
		pj := p.idle[i]
		if pj.memory != memory || pj.tmpSize != tmpSize {
			continue
		}
		p.idle = slices.Delete(p.idle, i, i+1)
		pj.timer.Stop() // if it has fired, remove finds pj gone and leaves it to us
		if pj.j.exited() {
			go pj.close()
			continue
		}
		return pj
	}
	return nil
}

// put keeps pj for a later verification, or closes it when it has ended,
// when a command changed its init (it would not be as good as new), or
// when enough jails wait already.
func (p *jailPool) put(pj *pooledJail) {
	if pj.j.exited() || pj.j.tainted.Load() {
		pj.close()
		return
	}
	p.mu.Lock()
	if len(p.idle) >= idleTestJails {
		p.mu.Unlock()
		pj.close()
		return
	}
	p.idle = append(p.idle, pj)
	pj.timer = time.AfterFunc(idleTestJailTime, func() {
		if p.remove(pj) {
			pj.close()
		}
	})
	p.mu.Unlock()
}

// remove takes pj out of the pool; false if it was not there.
func (p *jailPool) remove(pj *pooledJail) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.Index(p.idle, pj)
	if i < 0 {
		return false
	}
	p.idle = slices.Delete(p.idle, i, i+1)
	return true
}
