package bundled

import "fmt"

// Real estate agency: offices, agents, properties, clients, listings, sales
// and viewings.

var realEstateCities = []struct {
	city               string
	districts, streets []string
	perSqm             float64
}{
	{"Lisbon", []string{"Alfama", "Baixa", "Belem", "Campo de Ourique", "Parque das Nacoes"}, []string{"Rua Augusta", "Rua do Ouro", "Avenida da Liberdade", "Rua da Prata", "Rua Nova do Almada"}, 5200},
	{"Porto", []string{"Ribeira", "Boavista", "Foz do Douro", "Bonfim"}, []string{"Rua das Flores", "Rua de Santa Catarina", "Avenida da Boavista", "Rua do Almada"}, 3600},
	{"Madrid", []string{"Salamanca", "Chamberi", "Malasana", "Retiro", "Tetuan"}, []string{"Calle Mayor", "Calle de Alcala", "Gran Via", "Calle Serrano", "Calle de Fuencarral"}, 5600},
	{"Barcelona", []string{"Eixample", "Gracia", "Sants", "El Born", "Poblenou"}, []string{"Carrer de Mallorca", "Passeig de Gracia", "Carrer de Sants", "Avinguda Diagonal", "Carrer Gran"}, 5000},
	{"Valencia", []string{"Ruzafa", "El Carmen", "Benimaclet", "Cabanyal"}, []string{"Calle de Colon", "Calle del Mar", "Avenida del Puerto", "Calle de la Paz"}, 2700},
}

var (
	realEstateTypes  = []string{"Apartment", "Apartment", "Apartment", "House", "Townhouse", "Studio", "Penthouse"}
	realEstateStatus = []string{"Sold", "Sold", "Sold", "Active", "Withdrawn"}
)

func buildRealEstate(g *gen) []*table {
	office := g.table(tableSpec{name: "office", rows: len(realEstateCities), columns: []column{
		{"office_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", func(r *row) any { return "Casa Nova " + realEstateCities[r.i].city }},
		{"city TEXT NOT NULL", func(r *row) any { return realEstateCities[r.i].city }},
	}})
	agents := g.people(40)
	agent := g.table(tableSpec{name: "agent", rows: len(agents), columns: []column{
		{"agent_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", each(agents)},
		{"office_id INTEGER NOT NULL", refEachThenSkewed(office)},
		{"license_year INTEGER NOT NULL", between(2000, 2022)},
		{"commission_rate REAL NOT NULL", realBetween(1.5, 4, 2)},
	}, constraints: []string{
		"FOREIGN KEY (office_id) REFERENCES office (office_id)",
	}})
	property := newTable("property", `
property_id INTEGER PRIMARY KEY,
address TEXT NOT NULL,
city TEXT NOT NULL,
district TEXT NOT NULL,
property_type TEXT NOT NULL,
bedrooms INTEGER NOT NULL,
bathrooms INTEGER NOT NULL,
area_sqm INTEGER NOT NULL,
year_built INTEGER NOT NULL`)
	used := map[string]bool{}
	for i := range 900 {
		c := realEstateCities[g.skewed(len(realEstateCities))]
		addr := fmt.Sprintf("%s %d", g.pick(c.streets), g.between(1, 240))
		for used[addr] {
			addr = fmt.Sprintf("%s %d", g.pick(c.streets), g.between(1, 240))
		}
		used[addr] = true
		typ := g.pick(realEstateTypes)
		beds := 1 + g.skewed(5)
		if typ == "Studio" {
			beds = 0
		}
		property.add(i+1, addr, c.city, g.pickSkewed(c.districts), typ, beds, 1+beds/2, 30+beds*25+g.intn(40), g.between(1890, 2023))
	}
	clients := g.people(700)
	client := g.table(tableSpec{name: "client", rows: len(clients), columns: []column{
		{"client_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", each(clients)},
		{"phone TEXT NOT NULL", func(r *row) any {
			return fmt.Sprintf("+351 9%02d %03d %03d", r.g.intn(100), r.g.intn(1000), r.g.intn(1000))
		}},
		{"email TEXT NOT NULL", func(r *row) any { return email(r.str("name"), "mail.pt", r.g.intn(50)) }},
	}})
	return append([]*table{office, agent, property, client}, realEstateDeals(g, agent, property, client)...)
}

// realEstateDeals makes listings with their viewings, and the sales of the
// listings marked sold.
func realEstateDeals(g *gen, agent, property, client *table) []*table {
	listing := newTable("listing", `
listing_id INTEGER PRIMARY KEY,
property_id INTEGER NOT NULL,
agent_id INTEGER NOT NULL,
list_date TEXT NOT NULL,
asking_price REAL NOT NULL,
status TEXT NOT NULL,
FOREIGN KEY (property_id) REFERENCES property (property_id),
FOREIGN KEY (agent_id) REFERENCES agent (agent_id)`)
	sale := newTable("sale", `
sale_id INTEGER PRIMARY KEY,
listing_id INTEGER NOT NULL UNIQUE,
buyer_id INTEGER NOT NULL,
sale_date TEXT NOT NULL,
sale_price REAL NOT NULL,
FOREIGN KEY (listing_id) REFERENCES listing (listing_id),
FOREIGN KEY (buyer_id) REFERENCES client (client_id)`)
	viewing := newTable("viewing", `
viewing_id INTEGER PRIMARY KEY,
listing_id INTEGER NOT NULL,
client_id INTEGER NOT NULL,
viewing_date TEXT NOT NULL,
rating INTEGER NOT NULL,
FOREIGN KEY (listing_id) REFERENCES listing (listing_id),
FOREIGN KEY (client_id) REFERENCES client (client_id)`)
	perSqm := map[string]float64{}
	for _, c := range realEstateCities {
		perSqm[c.city] = c.perSqm
	}
	for p := 1; p <= property.len(); p++ {
		row := property.rows[p-1]
		listed := g.date("2021-01-01", "2024-03-31")
		ask := float64(1000 * int(perSqm[row[2].(string)]*float64(row[7].(int))*(0.75+0.5*g.r.Float64())/1000))
		status := g.pick(realEstateStatus)
		id := listing.len() + 1
		listing.add(id, p, 1+g.skewed(agent.len()), listed, ask, status)
		for v := range g.between(1, 6) {
			viewing.add(viewing.len()+1, id, 1+g.intn(client.len()), addDays(listed, 3+7*v+g.intn(7)), g.between(1, 5))
		}
		if status == "Sold" {
			sale.add(sale.len()+1, id, 1+g.intn(client.len()), addDays(listed, g.between(30, 200)), float64(1000*int(ask*(0.9+0.15*g.r.Float64())/1000)))
		}
	}
	return []*table{listing, sale, viewing}
}

var realEstateTemplates = []tmpl{
	// Easy: one table.
	one(easy, `SELECT count(*) FROM property WHERE city = {city} AND property_type = {type}`,
		`SELECT DISTINCT city, property_type AS type, lower(property_type) || 's' AS types FROM property`,
		"How many {types} are there in {city}?",
		"Count the properties of type {type} located in {city}."),
	one(easy, `SELECT round(avg(area_sqm), 1) FROM property WHERE district = {district}`, `SELECT DISTINCT district FROM property`,
		"What is the average floor area, in square metres, of the properties in {district}?",
		"On average, how large are the properties in the {district} district (in square metres)?"),
	many(easy, `SELECT address FROM property WHERE district = {district} AND bedrooms = {beds} ORDER BY address`,
		`SELECT district, bedrooms AS beds FROM property WHERE bedrooms > 0 GROUP BY 1, 2 HAVING count(*) BETWEEN 2 AND 12`,
		"List the addresses of the {beds}-bedroom properties in {district}.",
		"Which properties in {district} have exactly {beds} bedrooms? Give their addresses."),
	top(easy, 1, "address", "FROM property WHERE district = {district}", "year_built ASC", `SELECT DISTINCT district FROM property`,
		"What is the address of the oldest property in {district}?",
		"Which property in {district} was built first? Give its address."),
	one(easy, `SELECT count(*) FROM listing WHERE status = {status} AND strftime('%Y', list_date) = {year}`,
		`SELECT DISTINCT status, strftime('%Y', list_date) AS year, lower(status) AS word FROM listing`,
		"How many listings from {year} have the status {status}?",
		"Count the listings created in {year} that are now {word}."),
	one(easy, `SELECT max(sale_price) FROM sale WHERE strftime('%Y', sale_date) = {year}`, `SELECT DISTINCT strftime('%Y', sale_date) AS year FROM sale`,
		"What was the highest sale price achieved in {year}?",
		"How much did the most expensive property sold in {year} go for?"),
	one(easy, `SELECT round(avg(rating), 2) FROM viewing WHERE strftime('%Y-%m', viewing_date) = {ym}`,
		`SELECT DISTINCT strftime('%Y-%m', viewing_date) AS ym, `+monthName("viewing_date")+` || ' ' || strftime('%Y', viewing_date) AS month FROM viewing`,
		"What was the average rating given at viewings in {month}?",
		"On average, how did clients rate the properties they viewed in {month}?"),
	many(easy, `SELECT name FROM agent WHERE license_year >= {year} ORDER BY name`,
		`SELECT DISTINCT license_year AS year FROM agent WHERE license_year >= 2012`,
		"Which agents were licensed in {year} or later?",
		"List the agents whose licence dates from {year} or after."),
	many(easy, `SELECT property_type, count(*) FROM property WHERE city = {city} GROUP BY property_type ORDER BY property_type`,
		`SELECT DISTINCT city FROM property`,
		"Which property types are there in {city}, and how many properties of each?",
		"Break down the {city} properties by type, with a count for each."),
	one(easy, `SELECT count(DISTINCT district) FROM property WHERE city = {city}`, `SELECT DISTINCT city FROM property`,
		"In how many districts of {city} does the agency have properties?"),

	// Medium: two tables.
	one(medium, `SELECT count(*) FROM agent AS a JOIN office AS o ON a.office_id = o.office_id WHERE o.city = {city}`,
		`SELECT city FROM office`,
		"How many agents work at the {city} office?",
		"What is the number of agents based in the {city} office?"),
	one(medium, `SELECT round(avg(l.asking_price), 2) FROM listing AS l JOIN property AS p ON l.property_id = p.property_id WHERE p.district = {district} AND p.property_type = {type}`,
		`SELECT DISTINCT district, property_type AS type, lower(property_type) || 's' AS types FROM property`,
		"What is the average asking price of {types} listed in {district}?",
		"On average, what do sellers ask for a property of type {type} in {district}?"),
	top(medium, 1, "a.name", "FROM agent AS a JOIN listing AS l ON l.agent_id = a.agent_id WHERE strftime('%Y', l.list_date) = {year} GROUP BY a.agent_id", "count(*) DESC",
		`SELECT DISTINCT strftime('%Y', list_date) AS year FROM listing`,
		"Which agent created the most listings in {year}?",
		"Who listed the largest number of properties in {year}?"),
	many(medium, `SELECT p.address FROM property AS p JOIN listing AS l ON l.property_id = p.property_id WHERE l.status = 'Active' AND p.district = {district} ORDER BY p.address`,
		`SELECT DISTINCT district FROM property`,
		"Which properties in {district} are currently listed for sale (active listings)? Give their addresses.",
		"List the addresses of the properties in {district} with an active listing."),
	one(medium, `SELECT count(*) FROM viewing AS v JOIN client AS c ON v.client_id = c.client_id WHERE c.name = {name}`,
		`SELECT name FROM client`,
		"How many viewings has {name} attended?",
		"Count the property viewings booked by {name}."),
	one(medium, `SELECT max(l.asking_price) FROM listing AS l JOIN property AS p ON l.property_id = p.property_id WHERE p.city = {city} AND p.bedrooms = {beds}`,
		`SELECT DISTINCT city, bedrooms AS beds FROM property WHERE bedrooms > 0`,
		"What is the highest asking price for a {beds}-bedroom property in {city}?",
		"How much is the most expensive {beds}-bedroom listing in {city}?"),
	one(medium, `SELECT round(sum(s.sale_price), 2) FROM sale AS s JOIN client AS c ON s.buyer_id = c.client_id WHERE c.name = {name}`,
		`SELECT c.name FROM client AS c JOIN sale AS s ON s.buyer_id = c.client_id`,
		"How much has {name} paid in total for the properties they bought?",
		"What is the total purchase price of all properties bought by {name}?"),
	many(medium, `SELECT l.status, count(*) FROM listing AS l JOIN agent AS a ON l.agent_id = a.agent_id WHERE a.name = {agent} GROUP BY l.status ORDER BY l.status`,
		`SELECT name AS agent FROM agent`,
		"Which statuses do the listings of {agent} have, and how many listings per status?",
		"Break down the listings of the agent {agent} by status, with a count per status."),
	// Hard: three tables or more.
	one(hard, `SELECT round(sum(s.sale_price), 2) FROM sale AS s JOIN listing AS l ON s.listing_id = l.listing_id JOIN agent AS a ON l.agent_id = a.agent_id WHERE a.name = {agent}`,
		`SELECT name AS agent FROM agent`,
		"What is the total value of the sales closed by {agent}?",
		"Add up the sale prices of all properties sold by the agent {agent}."),
	top(hard, 1, "o.name", "FROM office AS o JOIN agent AS a ON a.office_id = o.office_id JOIN listing AS l ON l.agent_id = a.agent_id JOIN sale AS s ON s.listing_id = l.listing_id WHERE strftime('%Y', s.sale_date) = {year} GROUP BY o.office_id", "count(*) DESC",
		`SELECT DISTINCT strftime('%Y', sale_date) AS year FROM sale`,
		"Which office closed the most sales in {year}?",
		"In {year}, which office sold the largest number of properties?"),
	many(hard, `SELECT DISTINCT c.name FROM client AS c JOIN viewing AS v ON v.client_id = c.client_id JOIN listing AS l ON v.listing_id = l.listing_id JOIN property AS p ON l.property_id = p.property_id WHERE p.address = {address} ORDER BY c.name`,
		`SELECT p.address FROM property AS p JOIN listing AS l ON l.property_id = p.property_id JOIN viewing AS v ON v.listing_id = l.listing_id GROUP BY p.property_id HAVING count(DISTINCT v.client_id) >= 2`,
		"Which clients viewed the property at {address}?",
		"List the clients who attended a viewing of {address}."),
	many(hard, `SELECT a.name FROM agent AS a JOIN listing AS l ON l.agent_id = a.agent_id JOIN sale AS s ON s.listing_id = l.listing_id JOIN office AS o ON a.office_id = o.office_id WHERE o.city = {city} GROUP BY a.agent_id HAVING count(*) >= {n} ORDER BY a.name`,
		`SELECT city, n FROM office, (SELECT 5 AS n UNION SELECT 10 UNION SELECT 20)`,
		"Which agents of the {city} office have closed at least {n} sales?",
		"List the {city} agents with {n} or more sales."),
	one(hard, `SELECT round(avg(s.sale_price * 1.0 / p.area_sqm), 2) FROM sale AS s JOIN listing AS l ON s.listing_id = l.listing_id JOIN property AS p ON l.property_id = p.property_id WHERE p.district = {district}`,
		`SELECT DISTINCT district FROM property`,
		"What is the average sale price per square metre in {district}?",
		"On average, how much per square metre did properties in {district} sell for?"),
	one(hard, `SELECT a.name FROM agent AS a JOIN listing AS l ON l.agent_id = a.agent_id JOIN property AS p ON l.property_id = p.property_id WHERE p.address = {address}`,
		`SELECT address FROM property`,
		"Which agent handles the listing of the property at {address}?",
		"Who is the agent for the property at {address}?"),
	many(hard, `SELECT p.district, count(*) FROM sale AS s JOIN listing AS l ON s.listing_id = l.listing_id JOIN property AS p ON l.property_id = p.property_id WHERE p.city = {city} AND strftime('%Y', s.sale_date) = {year} GROUP BY p.district ORDER BY p.district`,
		`SELECT city, year FROM (SELECT DISTINCT city FROM property), (SELECT DISTINCT strftime('%Y', sale_date) AS year FROM sale)`,
		"In which districts of {city} were properties sold in {year}, and how many in each?",
		"List the districts of {city} with sales in {year} and the number of sales."),
}
