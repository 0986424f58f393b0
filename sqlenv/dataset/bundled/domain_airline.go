package bundled

import "fmt"

// Airline: airports, aircraft, flights, passengers and bookings.

var airlineAirports = []struct{ code, name, city, country string }{
	{"OSL", "Oslo Gardermoen", "Oslo", "Norway"}, {"BGO", "Bergen Flesland", "Bergen", "Norway"},
	{"TRD", "Trondheim Vaernes", "Trondheim", "Norway"}, {"ARN", "Stockholm Arlanda", "Stockholm", "Sweden"},
	{"GOT", "Gothenburg Landvetter", "Gothenburg", "Sweden"}, {"CPH", "Copenhagen Kastrup", "Copenhagen", "Denmark"},
	{"HEL", "Helsinki Vantaa", "Helsinki", "Finland"}, {"KEF", "Reykjavik Keflavik", "Reykjavik", "Iceland"},
	{"LHR", "London Heathrow", "London", "United Kingdom"}, {"LGW", "London Gatwick", "London", "United Kingdom"},
	{"MAN", "Manchester Airport", "Manchester", "United Kingdom"}, {"EDI", "Edinburgh Airport", "Edinburgh", "United Kingdom"},
	{"DUB", "Dublin Airport", "Dublin", "Ireland"}, {"AMS", "Amsterdam Schiphol", "Amsterdam", "Netherlands"},
	{"CDG", "Paris Charles de Gaulle", "Paris", "France"}, {"ORY", "Paris Orly", "Paris", "France"},
	{"NCE", "Nice Cote d'Azur", "Nice", "France"}, {"FRA", "Frankfurt Airport", "Frankfurt", "Germany"},
	{"MUC", "Munich Airport", "Munich", "Germany"}, {"BER", "Berlin Brandenburg", "Berlin", "Germany"},
	{"ZRH", "Zurich Airport", "Zurich", "Switzerland"}, {"VIE", "Vienna International", "Vienna", "Austria"},
	{"MAD", "Madrid Barajas", "Madrid", "Spain"}, {"BCN", "Barcelona El Prat", "Barcelona", "Spain"},
	{"AGP", "Malaga Costa del Sol", "Malaga", "Spain"}, {"LIS", "Lisbon Humberto Delgado", "Lisbon", "Portugal"},
	{"FCO", "Rome Fiumicino", "Rome", "Italy"}, {"MXP", "Milan Malpensa", "Milan", "Italy"},
	{"ATH", "Athens International", "Athens", "Greece"}, {"JFK", "New York John F. Kennedy", "New York", "United States"},
}

var airlineModels = []struct {
	model string
	seats int
}{
	{"Boeing 737-800", 186}, {"Airbus A320neo", 180}, {"Airbus A321neo", 220}, {"Boeing 787-9", 338},
	{"Embraer E190", 100}, {"ATR 72-600", 70}, {"Airbus A350-900", 315},
}

// airlineSeats is the number of seats of an aircraft model.
func airlineSeats(model string) int {
	for _, m := range airlineModels {
		if m.model == model {
			return m.seats
		}
	}
	panic("bundled: unknown aircraft model " + model)
}

var (
	airlineTiers   = []string{"None", "Silver", "Gold", "Platinum"}
	airlineClasses = []string{"Economy", "Economy", "Economy", "Economy", "Premium Economy", "Business"}
	airlineStatus  = []string{"On Time", "On Time", "On Time", "On Time", "Delayed", "Delayed", "Cancelled"}
)

func buildAirline(g *gen) []*table {
	airport := g.table(tableSpec{name: "airport", rows: len(airlineAirports), columns: []column{
		{"airport_code TEXT PRIMARY KEY", func(r *row) any { return airlineAirports[r.i].code }},
		{"name TEXT NOT NULL", func(r *row) any { return airlineAirports[r.i].name }},
		{"city TEXT NOT NULL", func(r *row) any { return airlineAirports[r.i].city }},
		{"country TEXT NOT NULL", func(r *row) any { return airlineAirports[r.i].country }},
	}})
	registrations := g.distinct(40, func() string { return fmt.Sprintf("LN-%c%c%c", 'A'+g.intn(26), 'A'+g.intn(26), 'A'+g.intn(26)) })
	aircraft := g.table(tableSpec{name: "aircraft", rows: len(registrations), columns: []column{
		{"aircraft_id INTEGER PRIMARY KEY", rowID},
		{"registration TEXT NOT NULL UNIQUE", each(registrations)},
		{"model TEXT NOT NULL", func(r *row) any { return airlineModels[r.g.skewed(len(airlineModels))].model }},
		{"seats INTEGER NOT NULL", func(r *row) any { return airlineSeats(r.str("model")) }},
		{"year_built INTEGER NOT NULL", between(2005, 2023)},
	}})
	passengers := g.people(1500)
	passenger := g.table(tableSpec{name: "passenger", rows: len(passengers), columns: []column{
		{"passenger_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", each(passengers)},
		{"nationality TEXT NOT NULL", skewedOneOf(nationalities)},
		{"birth_year INTEGER NOT NULL", between(1945, 2010)},
		{"frequent_flyer_tier TEXT NOT NULL", skewedOneOf(airlineTiers)},
	}})
	flight := airlineFlights(g)
	booking := newTable("booking", `
booking_id INTEGER PRIMARY KEY,
flight_id INTEGER NOT NULL,
passenger_id INTEGER NOT NULL,
seat TEXT NOT NULL,
fare_class TEXT NOT NULL,
price REAL NOT NULL,
FOREIGN KEY (flight_id) REFERENCES flight (flight_id),
FOREIGN KEY (passenger_id) REFERENCES passenger (passenger_id)`)
	seats := map[string]bool{}
	for booking.len() < 6000 {
		f, p := 1+g.intn(flight.len()), 1+g.skewed(passenger.len())
		class := g.pick(airlineClasses)
		row := g.between(1, 40)
		if class == "Business" {
			row = g.between(1, 5)
		}
		seat := fmt.Sprintf("%d%c", row, 'A'+g.intn(6))
		if seats[fmt.Sprint(f, seat)] {
			continue
		}
		seats[fmt.Sprint(f, seat)] = true
		minutes := flight.rows[f-1][7].(int)
		price := float64(minutes) * map[string]float64{"Economy": 1.1, "Premium Economy": 1.9, "Business": 4.2}[class] * (0.7 + g.r.Float64())
		booking.add(booking.len()+1, f, p, seat, class, round(price, 2))
	}
	return []*table{airport, aircraft, passenger, flight, booking}
}

// airlineFlights makes the flights: routes with fixed numbers, flown on many days.
func airlineFlights(g *gen) *table {
	flight := newTable("flight", `
flight_id INTEGER PRIMARY KEY,
flight_number TEXT NOT NULL,
origin_code TEXT NOT NULL,
destination_code TEXT NOT NULL,
aircraft_id INTEGER NOT NULL,
departure_date TEXT NOT NULL,
departure_time TEXT NOT NULL,
duration_minutes INTEGER NOT NULL,
status TEXT NOT NULL,
FOREIGN KEY (origin_code) REFERENCES airport (airport_code),
FOREIGN KEY (destination_code) REFERENCES airport (airport_code),
FOREIGN KEY (aircraft_id) REFERENCES aircraft (aircraft_id)`)
	type route struct {
		number, from, to, time string
		minutes                int
	}
	var routes []route
	seen := map[string]bool{}
	for len(routes) < 70 {
		a, b := g.skewed(len(airlineAirports)), g.intn(len(airlineAirports))
		key := fmt.Sprint(a, b)
		if a == b || seen[key] {
			continue
		}
		seen[key] = true
		routes = append(routes, route{fmt.Sprintf("NX%d", 100+len(routes)*7), airlineAirports[a].code, airlineAirports[b].code,
			fmt.Sprintf("%02d:%02d", g.between(6, 21), 5*g.intn(12)), g.between(50, 240)})
	}
	for i := range 2400 {
		r := routes[g.skewed(len(routes))]
		flight.add(i+1, r.number, r.from, r.to, 1+g.intn(40), g.date("2023-01-01", "2024-06-30"), r.time, r.minutes+g.between(-10, 15), g.pick(airlineStatus))
	}
	return flight
}

var airlineTemplates = []tmpl{
	// Easy: one table.
	one(easy, `SELECT count(*) FROM flight WHERE status = {status} AND strftime('%Y', departure_date) = {year}`,
		`SELECT DISTINCT status, strftime('%Y', departure_date) AS year, lower(status) AS word FROM flight WHERE status <> 'On Time'`,
		"How many flights were {word} in {year}?",
		"Count the flights of {year} whose status is {status}."),
	one(easy, `SELECT round(avg(duration_minutes), 1) FROM flight WHERE origin_code = {code}`, `SELECT DISTINCT origin_code AS code FROM flight`,
		"What is the average duration in minutes of flights departing from {code}?",
		"On average, how long do flights out of {code} last, in minutes?"),
	many(easy, `SELECT name FROM airport WHERE country = {country} ORDER BY name`,
		`SELECT country FROM airport GROUP BY 1 HAVING count(*) >= 2`,
		"Which airports are in the country {country}?",
		"List the names of the airports whose country is {country}."),
	top(easy, 1, "registration", "FROM aircraft WHERE model = {model}", "year_built ASC", `SELECT DISTINCT model FROM aircraft`,
		"What is the registration of the oldest {model} in the fleet?",
		"Which {model} aircraft was built first? Give its registration."),
	one(easy, `SELECT count(*) FROM passenger WHERE frequent_flyer_tier = {tier} AND nationality = {nat}`,
		`SELECT DISTINCT frequent_flyer_tier AS tier, nationality AS nat FROM passenger WHERE frequent_flyer_tier <> 'None'`,
		"How many {nat} passengers hold {tier} frequent flyer status?",
		"Count the passengers of {nat} nationality in the {tier} tier."),
	one(easy, `SELECT max(price) FROM booking WHERE fare_class = {class}`, `SELECT DISTINCT fare_class AS class FROM booking`,
		"What is the highest price paid for a booking in {class}?",
		"How much did the most expensive {class} ticket cost?"),
	many(easy, `SELECT registration FROM aircraft WHERE model = {model} ORDER BY registration`,
		`SELECT model FROM aircraft GROUP BY 1 HAVING count(*) >= 2`,
		"List the registrations of all {model} aircraft.",
		"Which aircraft in the fleet are of the model {model}? Give their registrations."),
	one(easy, `SELECT count(DISTINCT destination_code) FROM flight WHERE origin_code = {code}`, `SELECT DISTINCT origin_code AS code FROM flight`,
		"To how many different airports are there flights from {code}?",
		"How many distinct destinations are served from {code}?"),
	one(easy, `SELECT sum(seats) FROM aircraft WHERE year_built >= {year}`, `SELECT DISTINCT year_built AS year FROM aircraft WHERE year_built BETWEEN 2010 AND 2022`,
		"What is the total seat capacity of the aircraft built in {year} or later?"),
	many(easy, `SELECT fare_class, count(*) FROM booking GROUP BY fare_class ORDER BY fare_class`, "",
		"How many bookings were made in each fare class?"),

	// Medium: two tables.
	one(medium, `SELECT count(*) FROM flight AS f JOIN airport AS a ON f.origin_code = a.airport_code WHERE a.city = {city} AND strftime('%Y', f.departure_date) = {year}`,
		`SELECT DISTINCT a.city, strftime('%Y', f.departure_date) AS year FROM flight AS f JOIN airport AS a ON f.origin_code = a.airport_code`,
		"How many flights were scheduled to depart from {city} in {year}?",
		"In {year}, how many flights were scheduled out of airports in {city}?"),
	one(medium, `SELECT round(avg(b.price), 2) FROM booking AS b JOIN flight AS f ON b.flight_id = f.flight_id WHERE f.flight_number = {number} AND b.fare_class = {class}`,
		`SELECT DISTINCT f.flight_number AS number, b.fare_class AS class FROM booking AS b JOIN flight AS f ON b.flight_id = f.flight_id`,
		"What is the average price of the {class} bookings on flight {number}?",
		"On flight {number}, how much does a seat in {class} cost on average?"),
	top(medium, 1, "a.name", "FROM airport AS a JOIN flight AS f ON f.destination_code = a.airport_code WHERE f.origin_code = {code} GROUP BY a.airport_code", "count(*) DESC",
		`SELECT DISTINCT origin_code AS code FROM flight`,
		"Which airport receives the most flights from {code}?",
		"What is the most frequent destination airport of flights leaving {code}?"),
	top(medium, 1, "ac.model", "FROM aircraft AS ac JOIN flight AS f ON f.aircraft_id = ac.aircraft_id WHERE f.origin_code = {code} GROUP BY ac.model", "count(*) DESC",
		`SELECT DISTINCT origin_code AS code FROM flight`,
		"Which aircraft model flies most often out of {code}?",
		"What model of aircraft operates the largest number of departures from {code}?"),
	many(medium, `SELECT b.fare_class, count(*) FROM booking AS b JOIN passenger AS p ON b.passenger_id = p.passenger_id WHERE p.frequent_flyer_tier = {tier} GROUP BY b.fare_class ORDER BY b.fare_class`,
		`SELECT DISTINCT frequent_flyer_tier AS tier FROM passenger WHERE frequent_flyer_tier <> 'None'`,
		"For passengers with {tier} status, how many bookings are there in each fare class?",
		"Break down the bookings of {tier}-tier passengers by fare class, with a count for each."),
	one(medium, `SELECT round(sum(b.price), 2) FROM booking AS b JOIN passenger AS p ON b.passenger_id = p.passenger_id WHERE p.name = {name}`,
		`SELECT name FROM passenger`,
		"How much has {name} spent on bookings in total?",
		"What is the total price of all bookings made by {name}?"),
	many(medium, `SELECT DISTINCT d.name FROM flight AS f JOIN airport AS o ON f.origin_code = o.airport_code JOIN airport AS d ON f.destination_code = d.airport_code WHERE o.city = {city} ORDER BY d.name`,
		`SELECT DISTINCT a.city FROM flight AS f JOIN airport AS a ON f.origin_code = a.airport_code`,
		"To which airports can one fly from {city}?",
		"List the destination airports of flights departing from {city}."),
	top(medium, 3, "p.name", "FROM passenger AS p JOIN booking AS b ON b.passenger_id = p.passenger_id WHERE p.nationality = {nat} GROUP BY p.passenger_id", "count(*) DESC",
		`SELECT DISTINCT nationality AS nat FROM passenger`,
		"Which three {nat} passengers have made the most bookings?",
		"List the 3 {nat} passengers with the largest number of bookings."),

	// Hard: three tables or more.
	many(hard, `SELECT p.name FROM passenger AS p JOIN booking AS b ON b.passenger_id = p.passenger_id JOIN flight AS f ON b.flight_id = f.flight_id WHERE f.flight_number = {number} AND f.departure_date = {day} ORDER BY p.name`,
		`SELECT f.flight_number AS number, f.departure_date AS day FROM flight AS f JOIN booking AS b ON b.flight_id = f.flight_id GROUP BY f.flight_id HAVING count(*) BETWEEN 2 AND 12`,
		"List the passengers booked on flight {number} on {day}.",
		"Who was booked on flight {number} departing on {day}?"),
	top(hard, 1, "p.nationality", "FROM passenger AS p JOIN booking AS b ON b.passenger_id = p.passenger_id JOIN flight AS f ON b.flight_id = f.flight_id JOIN airport AS a ON f.destination_code = a.airport_code WHERE a.city = {city} GROUP BY p.nationality", "count(*) DESC",
		`SELECT DISTINCT a.city FROM flight AS f JOIN airport AS a ON f.destination_code = a.airport_code`,
		"Passengers of which nationality booked the most seats on flights to {city}?",
		"Which nationality accounts for the most bookings on flights arriving in {city}?"),
	one(hard, `SELECT round(sum(b.price), 2) FROM booking AS b JOIN flight AS f ON b.flight_id = f.flight_id JOIN aircraft AS ac ON f.aircraft_id = ac.aircraft_id WHERE ac.model = {model} AND strftime('%Y', f.departure_date) = {year}`,
		`SELECT model, year FROM (SELECT DISTINCT model FROM aircraft), (SELECT DISTINCT strftime('%Y', departure_date) AS year FROM flight)`,
		"What was the total booking revenue of flights operated with {model} aircraft in {year}?",
		"How much money did bookings on {model} flights bring in during {year}?"),
	many(hard, `SELECT p.name FROM passenger AS p JOIN booking AS b ON b.passenger_id = p.passenger_id JOIN flight AS f ON b.flight_id = f.flight_id WHERE p.frequent_flyer_tier = {tier} GROUP BY p.passenger_id HAVING count(DISTINCT f.destination_code) >= {n} ORDER BY p.name`,
		`SELECT DISTINCT frequent_flyer_tier AS tier, n FROM passenger, (SELECT 6 AS n UNION SELECT 8 UNION SELECT 10) WHERE frequent_flyer_tier <> 'None'`,
		"Which {tier}-tier passengers have booked flights to at least {n} different airports?",
		"List the passengers with {tier} status who have flown to {n} or more distinct destinations."),
	one(hard, `SELECT count(DISTINCT p.passenger_id) FROM passenger AS p JOIN booking AS b ON b.passenger_id = p.passenger_id JOIN flight AS f ON b.flight_id = f.flight_id JOIN airport AS a ON f.origin_code = a.airport_code WHERE p.nationality = {nat} AND a.country = {country}`,
		`SELECT DISTINCT nationality AS nat, country FROM passenger, airport`,
		"How many {nat} passengers have booked a flight departing from {country}?",
		"Count the distinct {nat} passengers with a booking on a flight that leaves from {country}."),
}
