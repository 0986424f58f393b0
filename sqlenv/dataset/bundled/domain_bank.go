package bundled

// Bank (evaluation): branches, customers, accounts, transactions and loans.

var (
	bankBranches = []struct{ name, city string }{
		{"Amsterdam Centrum", "Amsterdam"}, {"Amsterdam Zuid", "Amsterdam"}, {"Rotterdam Haven", "Rotterdam"},
		{"Utrecht Dom", "Utrecht"}, {"The Hague Central", "The Hague"}, {"Eindhoven Strijp", "Eindhoven"},
		{"Groningen Noord", "Groningen"}, {"Leiden Oude Rijn", "Leiden"},
	}
	bankSegments  = []string{"Retail", "Retail", "Retail", "Premier", "Business"}
	bankAccounts  = []string{"Checking", "Savings", "Checking", "Business", "Investment"}
	bankLoanTypes = []string{"Mortgage", "Car", "Personal", "Student", "Business"}
	bankStatuses  = []string{"Active", "Active", "Repaid", "Repaid", "Defaulted"}
	bankMerchants = []string{"Albert Heijn", "Jumbo", "Bol.com", "NS Railways", "Shell", "IKEA", "MediaMarkt", "HEMA", "Zara", "Coolblue", "Etos", "Kruidvat"}
)

func buildBank(g *gen) []*table {
	branch := g.table(tableSpec{name: "branch", rows: len(bankBranches), columns: []column{
		{"branch_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", func(r *row) any { return bankBranches[r.i].name }},
		{"city TEXT NOT NULL", func(r *row) any { return bankBranches[r.i].city }},
		{"opened_year INTEGER NOT NULL", between(1962, 2015)},
	}})
	customer := newTable("customer", `
customer_id INTEGER PRIMARY KEY,
name TEXT NOT NULL,
birth_date TEXT NOT NULL,
city TEXT NOT NULL,
segment TEXT NOT NULL,
branch_id INTEGER NOT NULL,
FOREIGN KEY (branch_id) REFERENCES branch (branch_id)`)
	for i, name := range g.people(1000) {
		b := g.skewed(len(bankBranches))
		customer.add(i+1, name, g.date("1940-01-01", "2005-12-31"), bankBranches[b].city, g.pick(bankSegments), b+1)
	}
	account := g.table(tableSpec{name: "account", rows: 1600, columns: []column{
		{"account_id INTEGER PRIMARY KEY", rowID},
		{"customer_id INTEGER NOT NULL", func(r *row) any { // every customer has an account
			if r.i < customer.len() {
				return r.i + 1
			}
			return 1 + r.g.intn(customer.len())
		}},
		{"account_type TEXT NOT NULL", oneOf(bankAccounts...)},
		{"opened_date TEXT NOT NULL", dateBetween("2005-01-01", "2023-12-31")},
		{"balance REAL NOT NULL", func(r *row) any {
			scale := map[string]float64{"Checking": 4000, "Savings": 25000, "Business": 60000, "Investment": 90000}[r.str("account_type")]
			return r.g.money(10, scale)
		}},
		{"currency TEXT NOT NULL", skewedOneOf([]string{"EUR", "EUR", "EUR", "USD", "GBP"})},
	}, constraints: []string{
		"FOREIGN KEY (customer_id) REFERENCES customer (customer_id)",
	}})
	return []*table{branch, customer, account, bankTransactions(g, account), bankLoans(g, customer)}
}

// bankTransactions makes the account transactions: card payments to
// merchants, deposits, cash withdrawals and transfers to people.
func bankTransactions(g *gen, account *table) *table {
	tx := newTable("account_transaction", `
transaction_id INTEGER PRIMARY KEY,
account_id INTEGER NOT NULL,
transaction_date TEXT NOT NULL,
kind TEXT NOT NULL,
counterparty TEXT NOT NULL,
amount REAL NOT NULL,
FOREIGN KEY (account_id) REFERENCES account (account_id)`)
	for i := range 7000 {
		kind := g.pick([]string{"Card Payment", "Card Payment", "Card Payment", "Deposit", "Withdrawal", "Transfer"})
		var party string
		amount := g.money(5, 250)
		switch kind {
		case "Card Payment":
			party = g.pickSkewed(bankMerchants)
		case "Deposit":
			party, amount = g.pick([]string{"Salary", "Cash Deposit", "Tax Refund"}), g.money(200, 5000)
		case "Withdrawal":
			party, amount = "ATM", float64(20*g.between(1, 25))
		default:
			party, amount = g.person(), g.money(20, 3000)
		}
		tx.add(i+1, 1+g.skewed(account.len()), g.date("2023-01-01", "2024-06-30"), kind, party, amount)
	}
	return tx
}

// bankLoans makes the loans, each booked at its customer's branch.
func bankLoans(g *gen, customer *table) *table {
	return g.table(tableSpec{name: "loan", rows: 700, columns: []column{
		{"loan_id INTEGER PRIMARY KEY", rowID},
		{"customer_id INTEGER NOT NULL", refSkewed(customer)},
		{"branch_id INTEGER NOT NULL", func(r *row) any { return customer.rows[r.int("customer_id")-1][5] }}, // the customer's
		{"loan_type TEXT NOT NULL", skewedOneOf(bankLoanTypes)},
		{"principal REAL NOT NULL", func(r *row) any { // in steps of 500
			scale := map[string]float64{"Mortgage": 450000, "Car": 35000, "Personal": 15000, "Student": 30000, "Business": 200000}[r.str("loan_type")]
			return float64(500 * int(r.g.money(scale*0.2, scale)/500))
		}},
		{"interest_rate REAL NOT NULL", realBetween(1.5, 9.5, 2)},
		{"start_date TEXT NOT NULL", dateBetween("2012-01-01", "2024-03-31")},
		{"term_months INTEGER NOT NULL", func(r *row) any { return 12 * r.g.between(1, 30) }},
		{"status TEXT NOT NULL", oneOf(bankStatuses...)},
	}, constraints: []string{
		"FOREIGN KEY (customer_id) REFERENCES customer (customer_id)",
		"FOREIGN KEY (branch_id) REFERENCES branch (branch_id)",
	}})
}

var bankTemplates = []tmpl{
	// Easy: one table.
	one(easy, `SELECT count(*) FROM customer WHERE segment = {segment} AND city = {city}`,
		`SELECT DISTINCT segment, city FROM customer`,
		"How many {segment} customers live in {city}?",
		"Count the customers of the {segment} segment whose city is {city}."),
	one(easy, `SELECT round(avg(balance), 2) FROM account WHERE account_type = {type} AND currency = {currency}`,
		`SELECT DISTINCT account_type AS type, currency FROM account`,
		"What is the average balance of {type} accounts held in {currency}?",
		"What is the mean balance of the {type} accounts denominated in {currency}?"),
	one(easy, `SELECT max(balance) FROM account WHERE account_type = {type} AND strftime('%Y', opened_date) = {year}`,
		`SELECT DISTINCT account_type AS type, strftime('%Y', opened_date) AS year FROM account`,
		"What is the largest balance among the {type} accounts opened in {year}?",
		"Of the {type} accounts opened during {year}, what is the highest balance?"),
	one(easy, `SELECT count(*) FROM account_transaction WHERE kind = {kind} AND strftime('%Y-%m', transaction_date) = {ym}`,
		`SELECT DISTINCT kind, strftime('%Y-%m', transaction_date) AS ym, `+monthName("transaction_date")+` || ' ' || strftime('%Y', transaction_date) AS month, lower(kind) || 's' AS kinds FROM account_transaction`,
		"How many {kinds} were made in {month}?",
		"Count the transactions of kind {kind} in {month}."),
	one(easy, `SELECT round(sum(amount), 2) FROM account_transaction WHERE kind = 'Card Payment' AND counterparty = {merchant} AND strftime('%Y', transaction_date) = {year}`,
		`SELECT DISTINCT counterparty AS merchant, strftime('%Y', transaction_date) AS year FROM account_transaction WHERE kind = 'Card Payment'`,
		"How much did customers spend by card at {merchant} in {year}?",
		"What is the total of the {year} card payments to {merchant}?"),
	one(easy, `SELECT round(avg(interest_rate), 2) FROM loan WHERE loan_type = {type} AND status = {status}`,
		`SELECT DISTINCT loan_type AS type, status FROM loan`,
		"What is the average interest rate of {type} loans with the status {status}?",
		"On average, what interest rate do the {status} {type} loans carry?"),
	many(easy, `SELECT loan_type, count(*) FROM loan WHERE status = {status} GROUP BY loan_type ORDER BY loan_type`,
		`SELECT DISTINCT status FROM loan`,
		"Which types of loan have the status {status}, and how many loans of each type?",
		"Break down the {status} loans by loan type, with a count per type."),
	top(easy, 1, "name", "FROM customer WHERE segment = {segment} AND city = {city}", "birth_date ASC",
		`SELECT DISTINCT segment, city FROM customer`,
		"Who is the oldest {segment} customer in {city}?",
		"Which {segment}-segment customer from {city} has the earliest birth date?"),
	many(easy, `SELECT name FROM customer WHERE segment = {segment} AND city = {city} AND birth_date >= {day} ORDER BY name`,
		`SELECT segment, city, '1990-01-01' AS day, 1990 AS year FROM customer GROUP BY 1, 2`,
		"Which {segment} customers in {city} were born in {year} or later?",
		"List the {segment} customers living in {city} whose birth date is on or after {day}."),
	one(easy, `SELECT count(*) FROM loan WHERE principal >= {amount} AND loan_type = {type}`,
		`SELECT DISTINCT loan_type AS type, amount FROM loan, (SELECT 10000 AS amount UNION SELECT 100000)`,
		"How many {type} loans have a principal of at least {amount}?",
		"Count the {type} loans whose principal is {amount} or more."),

	// Medium: two tables.
	one(medium, `SELECT count(*) FROM customer AS c JOIN branch AS b ON c.branch_id = b.branch_id WHERE b.name = {branch} AND c.segment = {segment}`,
		`SELECT DISTINCT b.name AS branch, c.segment FROM customer AS c JOIN branch AS b ON c.branch_id = b.branch_id`,
		"How many {segment} customers does the {branch} branch serve?",
		"Count the customers in the {segment} segment registered at the {branch} branch."),
	one(medium, `SELECT round(sum(a.balance), 2) FROM account AS a JOIN customer AS c ON a.customer_id = c.customer_id WHERE c.name = {name}`,
		`SELECT name FROM customer`,
		"What is the total balance of all accounts held by {name}?",
		"How much money does {name} have across all of their accounts?"),
	one(medium, `SELECT count(*) FROM account AS a JOIN customer AS c ON a.customer_id = c.customer_id WHERE c.name = {name}`,
		`SELECT c.name FROM customer AS c JOIN account AS a ON a.customer_id = c.customer_id GROUP BY c.customer_id HAVING count(*) > 1`,
		"How many accounts does {name} hold?",
		"Count the bank accounts owned by {name}."),
	top(medium, 1, "c.name", "FROM customer AS c JOIN account AS a ON a.customer_id = c.customer_id WHERE c.city = {city} GROUP BY c.customer_id", "sum(a.balance) DESC",
		`SELECT DISTINCT city FROM customer`,
		"Which customer in {city} has the highest total balance?",
		"Who is the wealthiest customer living in {city}, by the sum of their account balances?"),
	top(medium, 1, "b.name", "FROM branch AS b JOIN loan AS l ON l.branch_id = b.branch_id WHERE l.loan_type = {type} GROUP BY b.branch_id", "count(*) DESC",
		`SELECT DISTINCT loan_type AS type FROM loan`,
		"Which branch has granted the most {type} loans?",
		"At which branch were the largest number of {type} loans issued?"),
	one(medium, `SELECT round(sum(l.principal), 2) FROM loan AS l JOIN branch AS b ON l.branch_id = b.branch_id WHERE b.name = {branch} AND l.status = 'Active'`,
		`SELECT name AS branch FROM branch`,
		"What is the total principal of the active loans of the {branch} branch?",
		"How much principal is outstanding in active loans at {branch}?"),
	one(medium, `SELECT l.loan_type, l.principal FROM loan AS l JOIN customer AS c ON l.customer_id = c.customer_id WHERE c.name = {name} AND l.start_date = {day}`,
		`SELECT c.name, l.start_date AS day FROM customer AS c JOIN loan AS l ON l.customer_id = c.customer_id GROUP BY 1, 2 HAVING count(*) = 1`,
		"What type of loan did {name} take out on {day}, and for what principal?",
		"Give the loan type and principal of the loan {name} started on {day}."),
	one(medium, `SELECT round(avg(t.amount), 2) FROM account_transaction AS t JOIN account AS a ON t.account_id = a.account_id WHERE a.account_type = {type} AND t.kind = {kind}`,
		`SELECT type, kind, lower(kind) || 's' AS kinds FROM (SELECT DISTINCT account_type AS type FROM account), (SELECT DISTINCT kind FROM account_transaction)`,
		"What is the average amount of {kinds} made from {type} accounts?",
		"On {type} accounts, how large is a transaction of kind {kind} on average?"),

	// Hard: three tables or more.
	one(hard, `SELECT count(*) FROM account_transaction AS t JOIN account AS a ON t.account_id = a.account_id JOIN customer AS c ON a.customer_id = c.customer_id WHERE c.name = {name} AND strftime('%Y', t.transaction_date) = {year}`,
		`SELECT DISTINCT c.name, strftime('%Y', t.transaction_date) AS year FROM account_transaction AS t JOIN account AS a ON t.account_id = a.account_id JOIN customer AS c ON a.customer_id = c.customer_id`,
		"How many transactions did {name} make in {year}?",
		"Count the {year} transactions on the accounts of {name}."),
	one(hard, `SELECT round(sum(t.amount), 2) FROM account_transaction AS t JOIN account AS a ON t.account_id = a.account_id JOIN customer AS c ON a.customer_id = c.customer_id WHERE c.city = {city} AND t.counterparty = {merchant} AND t.kind = 'Card Payment'`,
		`SELECT city, merchant FROM (SELECT DISTINCT city FROM customer), (SELECT DISTINCT counterparty AS merchant FROM account_transaction WHERE kind = 'Card Payment')`,
		"How much have customers from {city} spent by card at {merchant}?",
		"What is the total of the card payments to {merchant} made by customers living in {city}?"),
	top(hard, 1, "t.counterparty", "FROM account_transaction AS t JOIN account AS a ON t.account_id = a.account_id JOIN customer AS c ON a.customer_id = c.customer_id WHERE c.segment = {segment} AND t.kind = 'Card Payment' GROUP BY t.counterparty", "sum(t.amount) DESC",
		`SELECT DISTINCT segment FROM customer`,
		"At which merchant do {segment} customers spend the most by card?",
		"Which merchant receives the largest total of card payments from customers in the {segment} segment?"),
	many(hard, `SELECT c.name FROM customer AS c JOIN account AS a ON a.customer_id = c.customer_id JOIN account_transaction AS t ON t.account_id = a.account_id JOIN branch AS b ON c.branch_id = b.branch_id WHERE b.name = {branch} GROUP BY c.customer_id HAVING count(*) >= {n} ORDER BY c.name`,
		`SELECT name AS branch, n FROM branch, (SELECT 20 AS n UNION SELECT 30 UNION SELECT 45)`,
		"Which customers of the {branch} branch have made at least {n} transactions?",
		"List the {branch} customers with {n} or more transactions on their accounts."),
	top(hard, 1, "b.name", "FROM branch AS b JOIN customer AS c ON c.branch_id = b.branch_id JOIN account AS a ON a.customer_id = c.customer_id WHERE a.account_type = {type} GROUP BY b.branch_id", "sum(a.balance) DESC",
		`SELECT DISTINCT account_type AS type FROM account`,
		"Which branch's customers hold the most money in {type} accounts?",
		"For {type} accounts, which branch has the largest total balance across its customers?"),
}
