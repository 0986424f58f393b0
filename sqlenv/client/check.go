package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/internal/protocol"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// MismatchError says how a server's episodes would differ from those of a
// local environment (CheckServer).
type MismatchError struct {
	// Server is the server's address (password hidden).
	Server string
	// Missing are the local questions the server does not play; Different
	// those it plays with another text, gold or database file (the first
	// few of each, and how many in all).
	Missing, Different           []string
	MissingCount, DifferentCount int
	// Rules and WantRules are the server's and the local rules.
	Rules, WantRules sqlenv.Rules
}

// Error says what differs and how to start a server that fits.
func (e *MismatchError) Error() string {
	var parts []string
	if e.MissingCount > 0 {
		parts = append(parts, fmt.Sprintf("%d questions it does not serve (%s)", e.MissingCount, strings.Join(e.Missing, ", ")))
	}
	if e.DifferentCount > 0 {
		parts = append(parts, fmt.Sprintf("%d questions it serves differently — other text, gold or database file (%s)", e.DifferentCount, strings.Join(e.Different, ", ")))
	}
	if e.Rules != e.WantRules {
		parts = append(parts, "other rules: "+strings.Join(rulesDiff(e.Rules, e.WantRules), ", "))
	}
	return fmt.Sprintf("environment server %s does not play this run's episodes: %s; start it with this run's questions, "+
		"databases and step budget (`train … questions` writes them and prints the sqlenv-server command)", e.Server, strings.Join(parts, "; "))
}

// CheckServer checks that the server at addr plays every question of the
// local environment configuration exactly as that environment would: same
// question text, gold and database file (local's Databases or DBDir holds
// the files whose digests are compared), and the same Rules (step budget,
// result sizes, rewards). It returns a *MismatchError when it does not.
func CheckServer(ctx context.Context, addr string, opts *Options, local sqlenv.Config) error {
	return CheckServers(ctx, []string{addr}, opts, local)
}

// CheckServers is CheckServer for several servers, checked at once: the
// local digests are computed once; the errors are joined.
func CheckServers(ctx context.Context, addrs []string, opts *Options, local sqlenv.Config) error {
	return errors.Join(CheckEachServer(ctx, addrs, opts, local)...)
}

// CheckEachServer is CheckServers with one result per address (nil: the
// server plays local's episodes), so that a caller can tell a server that
// is down (IsUnreachable) from one that differs.
func CheckEachServer(ctx context.Context, addrs []string, opts *Options, local sqlenv.Config) []error {
	dir := local.DBDir
	if local.Databases != nil {
		dir = local.Databases.Dir()
	}
	var cache dataset.DigestCache
	errs := make([]error, len(addrs))
	digests, err := cache.Digests(local.Questions, func(db string) string { return sqlitedb.Path(dir, db) })
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() { errs[i] = checkServer(ctx, addr, opts, local, digests) })
	}
	wg.Wait()
	return errs
}

// IsUnreachable reports whether err says that no server answered: the
// connection was refused or timed out, the name did not resolve, or the
// context ended first. A server that answered with an error (a protocol
// error, a refusal, a mismatch) is reachable.
func IsUnreachable(err error) bool {
	if err == nil {
		return false
	}
	var pe *Error
	var me *MismatchError
	if errors.As(err, &pe) || errors.As(err, &me) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded)
}

// checkServer compares the server at addr with local, whose questions'
// digests are given.
func checkServer(ctx context.Context, addr string, opts *Options, local sqlenv.Config, digests map[string]string) error {
	c, err := NewHTTPSession(addr, opts)
	if err != nil {
		return err
	}
	var got protocol.Questions
	if _, err := c.do(ctx, http.MethodGet, "/questions", nil, &got); err != nil {
		return fmt.Errorf("environment server %s: list its questions: %w", c.base.Redacted(), err)
	}
	served := make(map[string]string, len(got.Questions))
	for _, q := range got.Questions {
		served[q.QuestionID] = q.Digest
	}
	e := &MismatchError{Server: c.base.Redacted(), Rules: got.Rules, WantRules: local.Rules()}
	for _, q := range local.Questions {
		d, ok := served[q.QuestionID]
		switch {
		case !ok:
			e.MissingCount++
			if len(e.Missing) < 3 {
				e.Missing = append(e.Missing, q.QuestionID)
			}
		case d != digests[q.QuestionID]:
			e.DifferentCount++
			if len(e.Different) < 3 {
				e.Different = append(e.Different, q.QuestionID)
			}
		}
	}
	if e.MissingCount > 0 || e.DifferentCount > 0 || e.Rules != e.WantRules {
		return e
	}
	return nil
}

// rulesDiff names the rules that differ: "step_budget 15, not 10".
func rulesDiff(got, want sqlenv.Rules) []string {
	flat := func(r sqlenv.Rules) map[string]any {
		b, _ := json.Marshal(r)
		var m map[string]any
		json.Unmarshal(b, &m)
		out := map[string]any{}
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				for k2, v2 := range sub {
					out[k+"."+k2] = v2
				}
			} else {
				out[k] = v
			}
		}
		return out
	}
	g, w := flat(got), flat(want)
	var diff []string
	for _, k := range slices.Sorted(maps.Keys(w)) {
		if g[k] != w[k] {
			diff = append(diff, fmt.Sprintf("%s %v, not %v", k, g[k], w[k]))
		}
	}
	return diff
}
