package bundled

import "fmt"

// Library: branches, authors, books, copies, members and loans.

var (
	libraryBranches = []struct{ name, district string }{
		{"Central Library", "Old Town"}, {"Riverside Branch", "Riverside"}, {"Harbor Branch", "Harbor"},
		{"Northgate Branch", "Northgate"}, {"Oakwood Branch", "Oakwood"}, {"Eastfield Branch", "Eastfield"},
		{"Hillcrest Branch", "Hillcrest"}, {"University Branch", "Campus"},
	}
	libraryGenres = []string{"Fiction", "Mystery", "Science Fiction", "Fantasy", "Biography", "History", "Poetry", "Romance", "Thriller", "Science", "Travel", "Children's"}
	nationalities = []string{"British", "American", "Irish", "French", "German", "Spanish", "Italian", "Japanese", "Nigerian", "Canadian", "Swedish", "Brazilian", "Indian", "Polish"}
	libraryPlans  = []string{"Standard", "Student", "Senior", "Family"}
)

// monthName is a SQL expression naming the month of a YYYY-MM-DD column.
func monthName(col string) string {
	return fmt.Sprintf(`CASE strftime('%%m', %s) WHEN '01' THEN 'January' WHEN '02' THEN 'February' WHEN '03' THEN 'March' WHEN '04' THEN 'April' WHEN '05' THEN 'May' WHEN '06' THEN 'June' WHEN '07' THEN 'July' WHEN '08' THEN 'August' WHEN '09' THEN 'September' WHEN '10' THEN 'October' WHEN '11' THEN 'November' ELSE 'December' END`, col)
}

func buildLibrary(g *gen) []*table {
	branch := g.table(tableSpec{name: "branch", rows: len(libraryBranches), columns: []column{
		{"branch_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", func(r *row) any { return libraryBranches[r.i].name }},
		{"district TEXT NOT NULL", func(r *row) any { return libraryBranches[r.i].district }},
		{"opened_year INTEGER NOT NULL", between(1905, 2015)},
	}})
	author := g.peopleTable("author", 120, 1890, 1995)
	titles := g.distinct(600, g.title)
	book := g.table(tableSpec{name: "book", rows: len(titles), columns: []column{
		{"book_id INTEGER PRIMARY KEY", rowID},
		{"title TEXT NOT NULL", each(titles)},
		{"author_id INTEGER NOT NULL", refSkewed(author)},
		{"genre TEXT NOT NULL", skewedOneOf(libraryGenres)},
		{"publication_year INTEGER NOT NULL", func(r *row) any { // after the author's 22nd birthday
			born := author.rows[r.int("author_id")-1][3].(int)
			return min(born+r.g.between(22, 70), 2024)
		}},
		{"pages INTEGER NOT NULL", between(90, 820)},
		{"isbn TEXT NOT NULL UNIQUE", func(r *row) any {
			return fmt.Sprintf("978-%d-%05d-%03d", r.g.between(0, 9), r.g.intn(100000), r.i)
		}},
	}, constraints: []string{
		"FOREIGN KEY (author_id) REFERENCES author (author_id)",
	}})
	copies := g.table(tableSpec{name: "book_copy", rows: 1400, columns: []column{
		{"copy_id INTEGER PRIMARY KEY", rowID},
		{"book_id INTEGER NOT NULL", func(r *row) any { // every book has a copy
			if r.i < book.len() {
				return r.i + 1
			}
			return 1 + r.g.skewed(book.len())
		}},
		{"branch_id INTEGER NOT NULL", refSkewed(branch)},
		{"acquired_date TEXT NOT NULL", dateBetween("2010-01-01", "2023-12-31")},
		{"condition TEXT NOT NULL", oneOf("New", "Good", "Good", "Worn", "Damaged")},
	}, constraints: []string{
		"FOREIGN KEY (book_id) REFERENCES book (book_id)",
		"FOREIGN KEY (branch_id) REFERENCES branch (branch_id)",
	}})
	members := g.people(800)
	member := g.table(tableSpec{name: "member", rows: len(members), columns: []column{
		{"member_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", each(members)},
		{"email TEXT NOT NULL", func(r *row) any { return email(r.str("name"), "mail.com", r.g.intn(90)) }},
		{"membership_type TEXT NOT NULL", skewedOneOf(libraryPlans)},
		{"join_date TEXT NOT NULL", dateBetween("2015-01-01", "2023-12-31")},
		{"home_branch_id INTEGER NOT NULL", refSkewed(branch)},
	}, constraints: []string{
		"FOREIGN KEY (home_branch_id) REFERENCES branch (branch_id)",
	}})
	return []*table{branch, author, book, copies, member, libraryLoans(g, copies, member)}
}

// libraryLoans makes loans: recent ones may still be out (no return date).
func libraryLoans(g *gen, copies, member *table) *table {
	loan := newTable("loan", `
loan_id INTEGER PRIMARY KEY,
copy_id INTEGER NOT NULL,
member_id INTEGER NOT NULL,
loan_date TEXT NOT NULL,
due_date TEXT NOT NULL,
return_date TEXT,
late_fee REAL NOT NULL,
FOREIGN KEY (copy_id) REFERENCES book_copy (copy_id),
FOREIGN KEY (member_id) REFERENCES member (member_id)`)
	for i := range 4200 {
		out := g.date("2022-01-01", "2024-05-31")
		due := addDays(out, 21)
		var back any
		fee := 0.0
		if out < "2024-04-15" || g.chance(0.5) {
			late := g.between(-14, 10)
			if late > 0 {
				fee = 0.5 * float64(late)
			}
			back = addDays(due, late)
		}
		loan.add(i+1, 1+g.skewed(copies.len()), 1+g.skewed(member.len()), out, due, back, fee)
	}
	return loan
}

var libraryTemplates = []tmpl{
	// Easy: one table.
	one(easy, `SELECT count(*) FROM book WHERE genre = {genre}`, `SELECT DISTINCT genre FROM book`,
		"How many {genre} books are in the catalogue?",
		"How many titles does the library list under the genre {genre}?"),
	many(easy, `SELECT title FROM book WHERE genre = {genre} AND publication_year = {year} ORDER BY title`,
		`SELECT genre, publication_year AS year FROM book GROUP BY 1, 2 HAVING count(*) BETWEEN 2 AND 6`,
		"Which {genre} books were published in {year}?",
		"List the titles of the {genre} books that came out in {year}."),
	one(easy, `SELECT round(avg(pages), 1) FROM book WHERE genre = {genre}`, `SELECT DISTINCT genre FROM book`,
		"What is the average page count of {genre} books?",
		"On average, how many pages does a {genre} book in the catalogue have?"),
	top(easy, 1, "title", "FROM book WHERE genre = {genre}", "pages DESC", `SELECT DISTINCT genre FROM book`,
		"Which is the longest {genre} book?",
		"What is the title of the {genre} book with the most pages?"),
	one(easy, `SELECT count(*) FROM member WHERE membership_type = {plan} AND strftime('%Y', join_date) = {year}`,
		`SELECT DISTINCT membership_type AS plan, strftime('%Y', join_date) AS year FROM member`,
		"How many {plan} members joined in {year}?",
		"Count the members with a {plan} membership who joined during {year}."),
	many(easy, `SELECT name FROM author WHERE nationality = {nat} ORDER BY name`,
		`SELECT nationality AS nat FROM author GROUP BY 1 HAVING count(*) BETWEEN 2 AND 15`,
		"Which authors are {nat}?",
		"List the names of the {nat} authors."),
	one(easy, `SELECT count(*) FROM loan WHERE strftime('%Y-%m', loan_date) = {ym}`,
		`SELECT DISTINCT strftime('%Y-%m', loan_date) AS ym, `+monthName("loan_date")+` || ' ' || strftime('%Y', loan_date) AS month FROM loan`,
		"How many loans were made in {month}?",
		"How many times were books borrowed in {month}?"),
	one(easy, `SELECT round(sum(late_fee), 2) FROM loan WHERE strftime('%Y', loan_date) = {year}`,
		`SELECT DISTINCT strftime('%Y', loan_date) AS year FROM loan`,
		"What is the total of the late fees charged on loans made in {year}?",
		"How much was collected in late fees for books borrowed in {year}?"),
	top(easy, 1, "name", "FROM author WHERE nationality = {nat}", "birth_year ASC",
		`SELECT DISTINCT nationality AS nat FROM author`,
		"Who is the earliest-born {nat} author?",
		"Which {nat} author was born first?"),
	one(easy, `SELECT count(*) FROM loan WHERE return_date IS NULL`, "",
		"How many loans have not been returned yet?"),

	// Medium: two tables.
	many(medium, `SELECT b.title FROM book AS b JOIN author AS a ON b.author_id = a.author_id WHERE a.name = {author} ORDER BY b.title`,
		`SELECT a.name AS author FROM author AS a JOIN book AS b ON b.author_id = a.author_id GROUP BY a.author_id HAVING count(*) BETWEEN 2 AND 12`,
		"List the titles of books written by {author}.",
		"Which books in the catalogue are by {author}?"),
	one(medium, `SELECT a.name FROM author AS a JOIN book AS b ON b.author_id = a.author_id WHERE b.title = {title}`,
		`SELECT title FROM book`,
		"Who wrote {title}?",
		"Which author wrote the book titled {title}?"),
	one(medium, `SELECT count(*) FROM book AS b JOIN author AS a ON b.author_id = a.author_id WHERE a.nationality = {nat}`,
		`SELECT DISTINCT nationality AS nat FROM author`,
		"How many books in the catalogue were written by {nat} authors?",
		"Count the books whose author is {nat}."),
	top(medium, 1, "a.name", "FROM author AS a JOIN book AS b ON b.author_id = a.author_id WHERE b.genre = {genre} GROUP BY a.author_id", "count(*) DESC",
		`SELECT DISTINCT genre FROM book`,
		"Which author has written the most {genre} books?",
		"Who is the most prolific {genre} author in the catalogue?"),
	one(medium, `SELECT count(*) FROM member AS m JOIN branch AS b ON m.home_branch_id = b.branch_id WHERE b.name = {branch} AND m.membership_type = {plan}`,
		`SELECT b.name AS branch, m.membership_type AS plan FROM member AS m JOIN branch AS b ON m.home_branch_id = b.branch_id GROUP BY 1, 2`,
		"How many {plan} members have {branch} as their home branch?",
		"Count the members on a {plan} plan registered at {branch}."),
	top(medium, 1, "m.name", "FROM member AS m JOIN loan AS l ON l.member_id = m.member_id WHERE m.membership_type = {plan} AND strftime('%Y', l.loan_date) = {year} GROUP BY m.member_id", "count(*) DESC",
		`SELECT plan, year FROM (SELECT DISTINCT membership_type AS plan FROM member), (SELECT DISTINCT strftime('%Y', loan_date) AS year FROM loan)`,
		"Which {plan} member borrowed the most books in {year}?",
		"Among members with a {plan} membership, who made the most loans in {year}?"),
	many(medium, `SELECT b.name, count(*) FROM branch AS b JOIN book_copy AS c ON c.branch_id = b.branch_id WHERE strftime('%Y', c.acquired_date) = {year} GROUP BY b.name ORDER BY b.name`,
		`SELECT DISTINCT strftime('%Y', acquired_date) AS year FROM book_copy`,
		"Which branches acquired book copies in {year}, and how many did each acquire?",
		"List the branches that acquired copies during {year}, with the number of copies acquired."),
	one(medium, `SELECT round(sum(l.late_fee), 2) FROM loan AS l JOIN member AS m ON l.member_id = m.member_id WHERE m.name = {name}`,
		`SELECT name FROM member`,
		"How much has {name} paid in late fees in total?",
		"What is the total of the late fees charged to {name}?"),

	// Hard: three tables or more.
	many(hard, `SELECT DISTINCT m.name FROM member AS m JOIN loan AS l ON l.member_id = m.member_id JOIN book_copy AS c ON l.copy_id = c.copy_id JOIN book AS b ON c.book_id = b.book_id WHERE b.title = {title} ORDER BY m.name`,
		`SELECT b.title FROM book AS b JOIN book_copy AS c ON c.book_id = b.book_id JOIN loan AS l ON l.copy_id = c.copy_id GROUP BY b.book_id HAVING count(DISTINCT l.member_id) BETWEEN 2 AND 15`,
		"Which members have borrowed {title}?",
		"List the members who took out a copy of {title}."),
	top(hard, 1, "br.name", "FROM branch AS br JOIN book_copy AS c ON c.branch_id = br.branch_id JOIN loan AS l ON l.copy_id = c.copy_id JOIN book AS b ON c.book_id = b.book_id WHERE b.genre = {genre} GROUP BY br.branch_id", "count(*) DESC",
		`SELECT DISTINCT genre FROM book`,
		"Which branch lends out the most {genre} books?",
		"At which branch were {genre} books borrowed most often?"),
	one(hard, `SELECT count(*) FROM loan AS l JOIN book_copy AS c ON l.copy_id = c.copy_id JOIN book AS b ON c.book_id = b.book_id JOIN author AS a ON b.author_id = a.author_id WHERE a.name = {author}`,
		`SELECT name AS author FROM author`,
		"How many times have books by {author} been borrowed?",
		"Count the loans of books written by {author}."),
	many(hard, `SELECT a.name FROM author AS a JOIN book AS b ON b.author_id = a.author_id JOIN book_copy AS c ON c.book_id = b.book_id JOIN loan AS l ON l.copy_id = c.copy_id WHERE strftime('%Y', l.loan_date) = {year} GROUP BY a.author_id HAVING count(*) > {n} ORDER BY a.name`,
		`SELECT DISTINCT strftime('%Y', loan_date) AS year, n FROM loan, (SELECT 40 AS n UNION SELECT 60 UNION SELECT 80)`,
		"Which authors had their books borrowed more than {n} times in {year}?",
		"List the authors whose books were lent out over {n} times during {year}."),
	one(hard, `SELECT round(avg(l.late_fee), 2) FROM loan AS l JOIN book_copy AS c ON l.copy_id = c.copy_id JOIN book AS b ON c.book_id = b.book_id WHERE b.genre = {genre}`,
		`SELECT DISTINCT genre FROM book`,
		"What is the average late fee charged on loans of {genre} books?",
		"On average, how much in late fees does a loan of a {genre} book incur?"),
}
