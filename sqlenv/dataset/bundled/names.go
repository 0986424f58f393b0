package bundled

import (
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"

	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// Names for renamed schemas (see variant.go): the surface forms a table or
// column of a training database may take in a renamed copy.
//
// A name is made of the original name's words, each kept, replaced by a
// synonym or shortened, joined in a case style (snake_case, lowercase,
// camelCase or PascalCase), with an optional prefix or suffix. The
// synonyms and case styles are shared by every renaming; the affixes are
// split in two disjoint pools: PretrainNames draws from one (or none, or
// half of the time a made-up affix), and HeldoutNames puts one of the
// other pool on every name — so that no name of a held-out copy is ever a
// name that pre-training saw, while its words are ones a model can
// recognise from the question.

// NameSet says which pool of affixes (and of rewordings, Reword) a
// renaming draws from.
type NameSet string

const (
	// PretrainNames is the pool of pre-training data: some names keep
	// their original form, the others take the pool's affixes or none.
	PretrainNames NameSet = "pretrain"
	// HeldoutNames is the pool of the renamed evaluation copies: every
	// table and column name carries one of its affixes, which
	// PretrainNames never uses, so every name is new.
	HeldoutNames NameSet = "heldout"
)

// affixes are the prefixes and suffixes of one pool, for tables and for
// columns. Suffixes and prefixes are words: they are joined in the name's
// case style like its other words.
type affixes struct {
	tablePrefixes, tableSuffixes, columnPrefixes, columnSuffixes []string
}

// all is every affix of the pool.
func (a affixes) all() []string {
	return slices.Concat(a.tablePrefixes, a.tableSuffixes, a.columnPrefixes, a.columnSuffixes)
}

var affixPools = map[NameSet]affixes{
	PretrainNames: {
		tablePrefixes:  []string{"tbl", "t", "db", "main", "all"},
		tableSuffixes:  []string{"tbl", "table", "data", "info", "list", "records", "rows", "details"},
		columnPrefixes: []string{"c", "col", "the"},
		columnSuffixes: []string{"val", "txt", "field", "col", "no"},
	},
	HeldoutNames: {
		tablePrefixes:  []string{"core", "sys", "dim", "src"},
		tableSuffixes:  []string{"registry", "ledger", "master", "catalog", "vault"},
		columnPrefixes: []string{"f", "attr", "x"},
		columnSuffixes: []string{"attr", "fld", "datum", "spec"},
	},
}

// synonyms are other words for the words of the training databases' table
// and column names. None is a table name of an evaluation database, so
// that pre-training on renamed copies shows none of those schemas' names
// as a table.
var synonyms = map[string][]string{
	"airport":      {"airfield", "aerodrome", "hub"},
	"aircraft":     {"plane", "airplane", "jet"},
	"passenger":    {"traveler", "flyer", "pax"},
	"booking":      {"reservation", "ticketing"},
	"flight":       {"trip", "route", "departure"},
	"department":   {"dept", "division", "unit", "faculty"},
	"course":       {"class", "module", "subject"},
	"instructor":   {"teacher", "lecturer", "professor", "tutor"},
	"student":      {"pupil", "learner", "undergrad"},
	"enrollment":   {"registration", "enrolment", "signup"},
	"employee":     {"staff", "worker", "personnel"},
	"job":          {"position", "post", "role"},
	"project":      {"initiative", "program"},
	"assignment":   {"allocation", "staffing"},
	"stadium":      {"arena", "ground", "venue"},
	"team":         {"club", "squad", "side"},
	"player":       {"athlete", "footballer"},
	"game":         {"match", "fixture", "contest"},
	"goal":         {"score", "strike"},
	"doctor":       {"physician", "clinician", "medic"},
	"patient":      {"case", "inpatient"},
	"medication":   {"drug", "medicine", "remedy"},
	"admission":    {"stay", "hospitalization", "visit"},
	"prescription": {"script", "rx", "dispensation"},
	"book":         {"title", "volume", "publication"},
	"author":       {"writer", "novelist"},
	"member":       {"patron", "borrower", "subscriber"},
	"loan":         {"checkout", "lending", "borrowing"},
	"copy":         {"item", "exemplar", "holding"},
	"artist":       {"musician", "performer", "band"},
	"album":        {"record", "release", "lp"},
	"track":        {"song", "tune", "recording"},
	"listener":     {"user", "subscriber", "fan"},
	"stream":       {"play", "listen"},
	"playlist":     {"mix", "queue"},
	"office":       {"agency", "bureau"},
	"agent":        {"realtor", "broker"},
	"property":     {"estate", "home", "house", "building"},
	"client":       {"buyer", "prospect"},
	"listing":      {"offer", "advert"},
	"sale":         {"purchase", "deal", "transaction"},
	"viewing":      {"showing", "tour"},
	"restaurant":   {"eatery", "venue", "diner"},
	"menu":         {"carte", "dish"},
	"guest":        {"diner", "patron"},
	"order":        {"check", "bill", "request"},
	"line":         {"row", "entry"},
	"inspection":   {"audit", "check"},
	"store":        {"shop", "outlet"},
	"product":      {"article", "good", "merchandise"},
	"category":     {"kind", "group", "class"},
	"name":         {"label", "title", "fullname"},
	"city":         {"town", "municipality"},
	"country":      {"nation", "land"},
	"year":         {"yr"},
	"date":         {"day", "dt"},
	"id":           {"key", "ref", "no"},
	"number":       {"num", "no"},
	"price":        {"cost", "amount", "charge"},
	"salary":       {"pay", "wage", "earnings"},
	"budget":       {"funding", "allocation"},
	"email":        {"mail", "email_address"},
	"title":        {"heading", "caption"},
	"rank":         {"grade", "tier"},
	"grade":        {"mark", "result"},
	"semester":     {"term", "session"},
	"credits":      {"points", "units"},
	"level":        {"tier", "stage"},
	"gpa":          {"grade_average", "average_grade"},
	"home":         {"origin", "native"},
	"hire":         {"start", "joined"},
	"status":       {"state", "condition"},
	"seats":        {"capacity", "places"},
	"capacity":     {"size", "seats"},
	"rating":       {"stars", "evaluation"},
	"score":        {"points", "mark"},
	"genre":        {"style", "kind"},
	"opened":       {"established", "launched"},
	"founded":      {"established", "formed"},
	"birth":        {"born", "dob"},
	"nationality":  {"citizenship", "origin_country"},
	"quantity":     {"qty", "count_of_units"},
	"total":        {"overall", "sum"},
	"cost":         {"charge", "expense"},
	"attendance":   {"crowd", "spectators"},
	"position":     {"slot", "place"},
	"minute":       {"min", "time"},
	"duration":     {"length", "span"},
	"building":     {"hall", "location_name"},
	"district":     {"area", "quarter", "neighborhood"},
	"phone":        {"telephone", "tel"},
	"address":      {"street", "addr"},
	"brand":        {"make", "label"},
	"role":         {"function", "duty"},
	"wage":         {"pay_rate", "rate"},
	"calories":     {"kcal", "energy"},
	"fee":          {"charge", "fine"},
	"pages":        {"page_count", "length"},
	"diagnosis":    {"condition", "finding"},
	"dosage":       {"dose", "amount"},
	"explicit":     {"mature", "parental_advisory"},
	"username":     {"handle", "login"},
	"plan":         {"tier", "subscription"},
	"season":       {"campaign", "year_label"},
	"coach":        {"manager", "trainer"},
	"registration": {"tail_number", "reg"},
	"model":        {"type_name", "variant"},
	"tier":         {"level", "band"},
	"class":        {"cabin", "category"},
	"experience":   {"seniority", "service"},
	"sex":          {"gender"},
	"blood":        {"blood_group"},
	"insurance":    {"insurer", "coverage"},
	"provider":     {"company", "carrier"},
	"inspector":    {"auditor", "examiner"},
	"party":        {"group", "covers"},
	"waiter":       {"server", "staff_member"},
	"vegetarian":   {"veggie", "meatless"},
	"payment":      {"pay", "tender"},
	"method":       {"mode", "type"},
	"loyalty":      {"rewards", "club"},
	"major":        {"main_subject", "program"},
	"commission":   {"fee_share", "cut"},
	"asking":       {"listed", "requested"},
	"bedrooms":     {"beds", "rooms"},
	"bathrooms":    {"baths"},
	"area":         {"surface", "size"},
	"acquired":     {"purchased", "added"},
	"condition":    {"state", "shape"},
	"membership":   {"plan", "subscription"},
	"due":          {"expected", "deadline"},
	"late":         {"overdue"},
	"label":        {"publisher", "imprint"},
	"formed":       {"started", "founded"},
	"played":       {"listened", "heard"},
	"created":      {"made", "started"},
	"signup":       {"joined", "registered"},
	"review":       {"appraisal", "evaluation"},
	"performance":  {"perf", "appraisal"},
	"manager":      {"boss", "supervisor"},
	"unit":         {"per_item", "each"},
	"item":         {"dish", "entry"},
	"course_type":  {"dish_type"},
	"market":       {"transfer", "estimated"},
	"value":        {"worth", "valuation"},
	"shirt":        {"jersey", "kit"},
	"penalty":      {"spot_kick", "pk"},
	"away":         {"visiting", "guest_side"},
	"goals":        {"score", "tally"},
	"match":        {"game", "fixture"},
	"isbn":         {"isbn_code", "book_code"},
	"publication":  {"published", "release"},
	"origin":       {"from", "source"},
	"destination":  {"to", "target"},
	"departure":    {"leaving", "outbound"},
	"fare":         {"tariff", "price"},
	"seat":         {"place", "chair"},
	"frequent":     {"loyal", "regular"},
	"flyer":        {"traveller", "member"},
	"built":        {"made", "manufactured"},
	"code":         {"abbreviation", "tag"},
}

// evalOnlyTables are the table names of the evaluation databases that no
// training database has; no renaming produces them.
var evalOnlyTables = []string{"director", "movie", "actor", "movie_cast", "cinema", "screening", "ticket",
	"account", "account_transaction", "vehicle", "rental", "maintenance", "location",
	"conference", "researcher", "paper", "authorship"}

// namer draws names for one renaming.
type namer struct {
	r     *rand.Rand
	pool  affixes
	set   NameSet
	style int // the database's usual case style (styleSnake…)
	taken map[string]bool
}

// The case styles of a name's words.
const (
	styleSnake  = iota // home_city
	styleLower         // homecity
	styleCamel         // homeCity
	stylePascal        // HomeCity
)

// tableName draws a new name for table t.
func (n *namer) tableName(t string) string {
	return n.draw(t, true)
}

// columnName draws a new name for column c.
func (n *namer) columnName(c string) string {
	return n.draw(c, false)
}

// draw draws a name for the original name orig, not taken yet, not a SQL
// keyword and not a table of an evaluation database.
func (n *namer) draw(orig string, table bool) string {
	for try := 0; ; try++ {
		name := n.once(orig, table, try)
		key := strings.ToLower(name)
		if !n.taken[key] && !sqlitedb.IsKeyword(key) && !slices.Contains(evalOnlyTables, key) {
			n.taken[key] = true
			return name
		}
	}
}

// once draws one candidate name; after many tries it numbers the name, so
// that drawing always ends.
func (n *namer) once(orig string, table bool, try int) string {
	if n.set == PretrainNames && try == 0 && n.r.IntN(5) == 0 {
		return orig // a fifth of pre-training's names keep their form
	}
	words := strings.Split(orig, "_")
	var out []string
	for i, w := range words {
		out = append(out, n.word(w, table && i == len(words)-1)...)
	}
	prefixes, suffixes := n.pool.columnPrefixes, n.pool.columnSuffixes
	if table {
		prefixes, suffixes = n.pool.tablePrefixes, n.pool.tableSuffixes
	}
	affix := n.r.IntN(3) // 0: none, 1: prefix, 2: suffix
	if n.set == HeldoutNames && affix == 0 {
		affix = 1 + n.r.IntN(2) // every held-out name carries a held-out affix
	}
	switch affix {
	case 1:
		out = append([]string{n.affix(prefixes)}, out...)
	case 2:
		out = append(out, n.affix(suffixes))
	}
	if try > 8 {
		out = append(out, string(rune('2'+try%8)))
	}
	style := n.style
	if n.r.IntN(4) == 0 {
		style = n.r.IntN(4)
	}
	return joinWords(out, style)
}

// affix draws a prefix or suffix from pool or, for pre-training, half of
// the time a made-up one (madeUpAffix): a word no pool has, which a model
// can only copy from the schema it is shown, never recall — so that
// pre-training teaches copying a name, not choosing among the forms it
// has seen.
func (n *namer) affix(pool []string) string {
	if n.set == PretrainNames && n.r.IntN(2) == 0 {
		return madeUpAffix(n.r)
	}
	return pool[n.r.IntN(len(pool))]
}

// madeUpAffix draws an affix that is not a held-out affix: half of the
// time a pronounceable one of one or two syllables (ka, zol, bimer, …), half
// of the time 2–8 random letters (qx, vtrelmao, …). A vocabulary cuts the
// random ones into arbitrary pieces, as it cuts the held-out affixes it
// never learned (registry, vault, …): a model that learns to copy only
// the pieces pronounceable affixes are made of copies none of those
// (copyprobe -affixes, BENCHMARKS.md).
func madeUpAffix(r *rand.Rand) string {
	held := affixPools[HeldoutNames].all()
	for {
		var w string
		if r.IntN(2) == 0 {
			w = syllables(r, 1+r.IntN(2))
		} else {
			w = randomLetters(r, 2+r.IntN(7))
		}
		if !slices.Contains(held, w) {
			return w
		}
	}
}

// randomLetters is n random lower-case letters.
func randomLetters(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

// word draws the form of one word of a name: itself (a table's last word
// sometimes in the plural), a synonym or an abbreviation. A synonym may
// itself be several words.
func (n *namer) word(w string, last bool) []string {
	switch k := n.r.IntN(10); {
	case k < 4:
		if syn := synonyms[w]; len(syn) > 0 {
			return strings.Split(syn[n.r.IntN(len(syn))], "_")
		}
	case k < 5 && len(w) > 5:
		return []string{w[:3+n.r.IntN(2)]}
	case k < 7 && last:
		return []string{plural(w)}
	}
	return []string{w}
}

// joinWords joins lower-case words in a case style.
func joinWords(words []string, style int) string {
	var b strings.Builder
	for i, w := range words {
		switch {
		case style == styleSnake && i > 0:
			b.WriteByte('_')
			b.WriteString(w)
		case style == stylePascal || (style == styleCamel && i > 0):
			r := []rune(w)
			r[0] = unicode.ToUpper(r[0])
			b.WriteString(string(r))
		default:
			b.WriteString(w)
		}
	}
	return b.String()
}
