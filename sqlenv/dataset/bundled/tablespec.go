package bundled

import (
	"fmt"
	"strings"
)

// tableSpec describes a generated table as data: its name, how many rows it
// has, its columns, each with the rule that draws its value, and its table
// constraints (FOREIGN KEY lines), written as in CREATE TABLE. gen.table
// reads it. Tables whose rows depend on each other (a row's children, draws
// retried until unique) are built by code in their domain's file instead.
type tableSpec struct {
	name        string
	rows        int
	columns     []column
	constraints []string
}

// column is one column of a tableSpec: its definition, as in CREATE TABLE
// ("name TEXT NOT NULL"), and the rule that draws its value in each row.
type column struct {
	def  string
	draw rule
}

// rule draws a column's value in one row: an int, int64, float64, string
// or nil.
type rule func(r *row) any

// row is what a rule sees: the generator, the row's index (from 0; ids are
// index+1) and the values drawn so far in the row, by column name.
type row struct {
	g      *gen
	i      int
	table  string
	names  []string // the columns' names
	values []any
}

// value returns the value of the column col, drawn earlier in the row.
func (r *row) value(col string) any {
	for j, v := range r.values {
		if r.names[j] == col {
			return v
		}
	}
	panic(fmt.Sprintf("bundled: table %s: column %q is not drawn before it is read", r.table, col))
}

// int returns the integer value of the earlier column col.
func (r *row) int(col string) int { return r.value(col).(int) }

// str returns the text value of the earlier column col.
func (r *row) str(col string) string { return r.value(col).(string) }

// table generates the table s describes: row by row, and in each row column
// by column, so the random draws happen in that order.
func (g *gen) table(s tableSpec) *table {
	lines := make([]string, 0, len(s.columns)+len(s.constraints))
	names := make([]string, len(s.columns))
	for j, c := range s.columns {
		lines = append(lines, c.def)
		names[j] = strings.Fields(c.def)[0]
	}
	t := newTable(s.name, strings.Join(append(lines, s.constraints...), ",\n"))
	for i := range s.rows {
		r := &row{g: g, i: i, table: s.name, names: names, values: make([]any, 0, len(s.columns))}
		for _, c := range s.columns {
			r.values = append(r.values, c.draw(r))
		}
		t.add(r.values...)
	}
	return t
}

// The rules. Those that take a list or table read it when the row is drawn.

// rowID is the row's index + 1.
func rowID(r *row) any { return r.i + 1 }

// each is the element of xs at the row's index: one row per element.
func each[T any](xs []T) rule { return func(r *row) any { return xs[r.i] } }

// oneOf picks an element of xs uniformly.
func oneOf(xs ...string) rule { return func(r *row) any { return r.g.pick(xs) } }

// skewedOneOf picks an element of xs, favouring the first ones.
func skewedOneOf(xs []string) rule { return func(r *row) any { return r.g.pickSkewed(xs) } }

// between draws an integer in [lo, hi].
func between(lo, hi int) rule { return func(r *row) any { return r.g.between(lo, hi) } }

// dateBetween draws a day in [from, to] (YYYY-MM-DD).
func dateBetween(from, to string) rule { return func(r *row) any { return r.g.date(from, to) } }

// moneyBetween draws an amount in [lo, hi] rounded to cents.
func moneyBetween(lo, hi float64) rule { return func(r *row) any { return r.g.money(lo, hi) } }

// realBetween draws a real in [lo, hi] with the given number of decimals.
func realBetween(lo, hi float64, decimals int) rule {
	return func(r *row) any { return r.g.real(lo, hi, decimals) }
}

// flag is 1 with probability p, else 0.
func flag(p float64) rule {
	return func(r *row) any {
		if r.g.chance(p) {
			return 1
		}
		return 0
	}
}

// refSkewed references a row of t by id, favouring the first rows.
func refSkewed(t *table) rule { return func(r *row) any { return 1 + r.g.skewed(t.len()) } }

// refEachThenSkewed references the rows of t in turn, once each, then rows
// of t favouring the first ones, so every row of t is referenced. The
// skewed draw is made in every row, used or not.
func refEachThenSkewed(t *table) rule {
	return func(r *row) any {
		ref := 1 + r.g.skewed(t.len())
		if r.i < t.len() {
			ref = r.i + 1
		}
		return ref
	}
}

// person draws a full name (namesakes possible; see gen.people for distinct
// names).
func person(r *row) any { return r.g.person() }

// peopleTable is the table name of n people: <name>_id, distinct names, a
// nationality (skewed) and a birth year in [bornFrom, bornTo].
func (g *gen) peopleTable(name string, n, bornFrom, bornTo int) *table {
	names := g.people(n)
	return g.table(tableSpec{name: name, rows: n, columns: []column{
		{name + "_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", each(names)},
		{"nationality TEXT NOT NULL", skewedOneOf(nationalities)},
		{"birth_year INTEGER NOT NULL", between(bornFrom, bornTo)},
	}})
}
