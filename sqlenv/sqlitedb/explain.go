package sqlitedb

import (
	"context"
	"sort"
	"strings"
)

// TablesRead lists the tables a (trusted) SELECT statement reads, sorted: the
// tables whose b-trees, or whose indexes' b-trees, its compiled program opens.
// It reads the query plan (EXPLAIN) and runs nothing.
func (d *DB) TablesRead(ctx context.Context, sqlText string) ([]string, error) {
	if err := checkStatementText(sqlText); err != nil {
		return nil, err
	}
	byRoot := d.rootTables
	plan, err := d.run(ctx, "EXPLAIN "+sqlText, 0)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, r := range plan.Rows {
		// EXPLAIN columns: addr, opcode, p1, p2, p3, p4, p5, comment.
		op, _ := r[1].(string)
		if op != "OpenRead" {
			continue
		}
		if root, ok := r[3].(int64); ok {
			if name, ok := byRoot[root]; ok && !strings.HasPrefix(name, "sqlite_") {
				seen[name] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}
