package bundled

import "fmt"

// Car rental (evaluation): locations, vehicles, customers, rentals and
// maintenance.

var (
	carLocations = []struct{ name, city string }{
		{"Dublin Airport", "Dublin"}, {"Dublin City Centre", "Dublin"}, {"Cork Airport", "Cork"},
		{"Galway Station", "Galway"}, {"Shannon Airport", "Shannon"}, {"Limerick City", "Limerick"},
		{"Kilkenny Town", "Kilkenny"}, {"Belfast Harbour", "Belfast"},
	}
	carModels = []struct {
		make, model, category string
		rate                  float64
	}{
		{"Toyota", "Yaris", "Economy", 38}, {"Volkswagen", "Polo", "Economy", 40}, {"Fiat", "500", "Economy", 35},
		{"Ford", "Focus", "Compact", 48}, {"Volkswagen", "Golf", "Compact", 52}, {"Skoda", "Octavia", "Compact", 50},
		{"Toyota", "RAV4", "SUV", 75}, {"Nissan", "Qashqai", "SUV", 70}, {"Hyundai", "Tucson", "SUV", 72},
		{"Ford", "Transit", "Van", 90}, {"Mercedes-Benz", "Vito", "Van", 105},
		{"BMW", "5 Series", "Luxury", 140}, {"Mercedes-Benz", "E-Class", "Luxury", 150}, {"Tesla", "Model 3", "Electric", 95},
		{"Renault", "Zoe", "Electric", 55},
	}
	carServices = []string{"Oil Change", "Tyre Replacement", "Brake Service", "Annual Inspection", "Windscreen Repair", "Battery Check"}
)

func buildCarRental(g *gen) []*table {
	location := g.table(tableSpec{name: "location", rows: len(carLocations), columns: []column{
		{"location_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", func(r *row) any { return carLocations[r.i].name }},
		{"city TEXT NOT NULL", func(r *row) any { return carLocations[r.i].city }},
		{"address TEXT NOT NULL", func(r *row) any { return r.g.address() }},
	}})
	vehicle := newTable("vehicle", `
vehicle_id INTEGER PRIMARY KEY,
plate TEXT NOT NULL UNIQUE,
make TEXT NOT NULL,
model TEXT NOT NULL,
model_year INTEGER NOT NULL,
category TEXT NOT NULL,
daily_rate REAL NOT NULL,
home_location_id INTEGER NOT NULL,
FOREIGN KEY (home_location_id) REFERENCES location (location_id)`)
	plates := g.distinct(160, func() string {
		return fmt.Sprintf("%d-%s-%d", g.between(18, 24), g.pick([]string{"D", "C", "G", "L", "KK"}), g.between(100, 99999))
	})
	for i, plate := range plates {
		m := carModels[g.skewed(len(carModels))]
		vehicle.add(i+1, plate, m.make, m.model, g.between(2018, 2024), m.category, round(m.rate*(0.9+0.2*g.r.Float64()), 2), 1+g.skewed(len(carLocations)))
	}
	names := g.people(900)
	customer := g.table(tableSpec{name: "customer", rows: len(names), columns: []column{
		{"customer_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", each(names)},
		{"license_country TEXT NOT NULL", skewedOneOf([]string{"Ireland", "United Kingdom", "United States", "Germany", "France", "Spain", "Italy", "Netherlands", "Canada", "Poland"})},
		{"birth_year INTEGER NOT NULL", between(1950, 2003)},
		{"email TEXT NOT NULL", func(r *row) any { return email(r.str("name"), "inbox.com", r.g.intn(100)) }},
	}})
	return []*table{location, vehicle, customer, carRentals(g, vehicle, customer), carMaintenance(g, vehicle)}
}

// carRentals makes the rentals: picked up at the vehicle's home location,
// returned elsewhere one time in five.
func carRentals(g *gen, vehicle, customer *table) *table {
	rental := newTable("rental", `
rental_id INTEGER PRIMARY KEY,
vehicle_id INTEGER NOT NULL,
customer_id INTEGER NOT NULL,
pickup_location_id INTEGER NOT NULL,
return_location_id INTEGER NOT NULL,
start_date TEXT NOT NULL,
end_date TEXT NOT NULL,
km_driven INTEGER NOT NULL,
total_price REAL NOT NULL,
FOREIGN KEY (vehicle_id) REFERENCES vehicle (vehicle_id),
FOREIGN KEY (customer_id) REFERENCES customer (customer_id),
FOREIGN KEY (pickup_location_id) REFERENCES location (location_id),
FOREIGN KEY (return_location_id) REFERENCES location (location_id)`)
	for i := range 3000 {
		v := 1 + g.intn(vehicle.len())
		home := vehicle.rows[v-1][7].(int)
		back := home
		if g.chance(0.2) {
			back = 1 + g.intn(len(carLocations))
		}
		start := g.date("2023-01-01", "2024-06-30")
		days := 1 + g.skewed(14)
		rate := vehicle.rows[v-1][6].(float64)
		rental.add(i+1, v, 1+g.skewed(customer.len()), home, back, start, addDays(start, days), days*g.between(40, 260), round(rate*float64(days), 2))
	}
	return rental
}

// carMaintenance makes the vehicles' services, priced around each service's
// typical cost.
func carMaintenance(g *gen, vehicle *table) *table {
	maintenance := newTable("maintenance", `
maintenance_id INTEGER PRIMARY KEY,
vehicle_id INTEGER NOT NULL,
service_date TEXT NOT NULL,
service_type TEXT NOT NULL,
cost REAL NOT NULL,
FOREIGN KEY (vehicle_id) REFERENCES vehicle (vehicle_id)`)
	price := map[string]float64{"Oil Change": 90, "Tyre Replacement": 420, "Brake Service": 310, "Annual Inspection": 150, "Windscreen Repair": 260, "Battery Check": 45}
	for i := range 900 {
		s := g.pick(carServices)
		maintenance.add(i+1, 1+g.intn(vehicle.len()), g.date("2022-01-01", "2024-06-30"), s, g.money(price[s]*0.8, price[s]*1.4))
	}
	return maintenance
}

var carRentalTemplates = []tmpl{
	// Easy: one table.
	one(easy, `SELECT count(*) FROM vehicle WHERE category = {category} AND model_year >= {year}`,
		`SELECT DISTINCT category, year FROM vehicle, (SELECT 2020 AS year UNION SELECT 2022)`,
		"How many {category} vehicles in the fleet are from model year {year} or newer?",
		"Count the {category} cars whose model year is at least {year}."),
	one(easy, `SELECT round(avg(daily_rate), 2) FROM vehicle WHERE category = {category}`, `SELECT DISTINCT category FROM vehicle`,
		"What is the average daily rate of the vehicles in the {category} category?",
		"On average, how much does it cost per day to rent a car of the {category} category?"),
	many(easy, `SELECT DISTINCT model FROM vehicle WHERE make = {make} ORDER BY model`,
		`SELECT make FROM vehicle GROUP BY 1 HAVING count(DISTINCT model) >= 2`,
		"Which {make} models does the rental company have?",
		"List the models of the {make} vehicles in the fleet."),
	top(easy, 1, "plate", "FROM vehicle WHERE category = {category}", "daily_rate DESC", `SELECT DISTINCT category FROM vehicle`,
		"What is the plate of the most expensive {category} vehicle per day?",
		"Which {category} car has the highest daily rate? Give its plate."),
	one(easy, `SELECT count(*) FROM rental WHERE strftime('%Y-%m', start_date) = {ym}`,
		`SELECT DISTINCT strftime('%Y-%m', start_date) AS ym, `+monthName("start_date")+` || ' ' || strftime('%Y', start_date) AS month FROM rental`,
		"How many rentals started in {month}?",
		"What is the number of rentals picked up during {month}?"),
	one(easy, `SELECT round(avg(km_driven), 1) FROM rental WHERE julianday(end_date) - julianday(start_date) >= {days}`,
		`SELECT 3 AS days UNION SELECT 7 UNION SELECT 10`,
		"What is the average distance driven, in km, on rentals lasting at least {days} days?",
		"On average, how many kilometres are driven during rentals of {days} days or more?"),
	one(easy, `SELECT round(sum(cost), 2) FROM maintenance WHERE service_type = {service} AND strftime('%Y', service_date) = {year}`,
		`SELECT DISTINCT service_type AS service, strftime('%Y', service_date) AS year FROM maintenance`,
		"How much was spent on {service} maintenance in {year}?",
		"What was the total cost of the {service} jobs carried out in {year}?"),
	one(easy, `SELECT count(*) FROM customer WHERE license_country = {country} AND birth_year >= {year}`,
		`SELECT DISTINCT license_country AS country, year FROM customer, (SELECT 1980 AS year UNION SELECT 1990)`,
		"How many customers with a driving licence from {country} were born in {year} or later?",
		"Count the customers licensed in {country} whose birth year is {year} or later."),
	many(easy, `SELECT category, count(*) FROM vehicle WHERE model_year = {year} GROUP BY category ORDER BY category`,
		`SELECT DISTINCT model_year AS year FROM vehicle`,
		"Which categories do the vehicles of model year {year} belong to, and how many per category?",
		"Break down the model-year {year} vehicles by category, with a count for each."),
	top(easy, 1, "service_type", "FROM maintenance WHERE strftime('%Y', service_date) = {year} GROUP BY service_type", "sum(cost) DESC",
		`SELECT DISTINCT strftime('%Y', service_date) AS year FROM maintenance`,
		"Which type of maintenance cost the most in total in {year}?",
		"In {year}, on which service type was the most money spent?"),

	// Medium: two tables.
	one(medium, `SELECT count(*) FROM vehicle AS v JOIN location AS l ON v.home_location_id = l.location_id WHERE l.name = {location} AND v.category = {category}`,
		`SELECT DISTINCT l.name AS location, v.category FROM vehicle AS v JOIN location AS l ON v.home_location_id = l.location_id`,
		"How many {category} vehicles are based at {location}?",
		"Count the cars of the {category} category whose home location is {location}."),
	one(medium, `SELECT count(*) FROM rental AS r JOIN customer AS c ON r.customer_id = c.customer_id WHERE c.name = {name}`,
		`SELECT c.name FROM customer AS c JOIN rental AS r ON r.customer_id = c.customer_id`,
		"How many times has {name} rented a car?",
		"Count the rentals made by {name}."),
	one(medium, `SELECT round(sum(r.total_price), 2) FROM rental AS r JOIN customer AS c ON r.customer_id = c.customer_id WHERE c.name = {name}`,
		`SELECT c.name FROM customer AS c JOIN rental AS r ON r.customer_id = c.customer_id`,
		"How much has {name} paid for rentals in total?",
		"What is the total price of all rentals by {name}?"),
	top(medium, 1, "v.make || ' ' || v.model", "FROM vehicle AS v JOIN rental AS r ON r.vehicle_id = v.vehicle_id WHERE strftime('%Y', r.start_date) = {year} GROUP BY v.make, v.model", "count(*) DESC",
		`SELECT DISTINCT strftime('%Y', start_date) AS year FROM rental`,
		"Which car model (make and model) was rented most often in {year}?",
		"What was the most popular make and model among the rentals of {year}?"),
	top(medium, 1, "l.name", "FROM location AS l JOIN rental AS r ON r.pickup_location_id = l.location_id WHERE strftime('%Y-%m', r.start_date) = {ym} GROUP BY l.location_id", "count(*) DESC",
		`SELECT DISTINCT strftime('%Y-%m', start_date) AS ym, `+monthName("start_date")+` || ' ' || strftime('%Y', start_date) AS month FROM rental`,
		"Which location had the most pickups in {month}?",
		"In {month}, from which location were the most cars picked up?"),
	one(medium, `SELECT round(sum(m.cost), 2) FROM maintenance AS m JOIN vehicle AS v ON m.vehicle_id = v.vehicle_id WHERE v.plate = {plate}`,
		`SELECT v.plate FROM vehicle AS v JOIN maintenance AS m ON m.vehicle_id = v.vehicle_id`,
		"How much has been spent on maintaining the vehicle with plate {plate}?",
		"What is the total maintenance cost of the car {plate}?"),
	many(medium, `SELECT v.plate FROM vehicle AS v JOIN location AS l ON v.home_location_id = l.location_id WHERE l.name = {location} AND v.category = {category} ORDER BY v.plate`,
		`SELECT l.name AS location, v.category FROM vehicle AS v JOIN location AS l ON v.home_location_id = l.location_id GROUP BY 1, 2 HAVING count(*) BETWEEN 2 AND 12`,
		"List the plates of the {category} vehicles based at {location}.",
		"Which {category} cars have {location} as their home location? Give the plates."),
	one(medium, `SELECT count(*) FROM rental AS r JOIN location AS l ON r.pickup_location_id = l.location_id WHERE l.city = {city} AND r.return_location_id <> r.pickup_location_id`,
		`SELECT DISTINCT city FROM location`,
		"How many one-way rentals (returned to a different location) were picked up in {city}?",
		"Count the rentals picked up in {city} and returned somewhere else."),

	// Hard: three tables or more.
	many(hard, `SELECT DISTINCT c.name FROM customer AS c JOIN rental AS r ON r.customer_id = c.customer_id JOIN vehicle AS v ON r.vehicle_id = v.vehicle_id WHERE v.make = {make} AND v.model = {model} AND strftime('%Y-%m', r.start_date) = {ym} ORDER BY c.name`,
		`SELECT v.make, v.model, strftime('%Y-%m', r.start_date) AS ym, `+monthName("r.start_date")+` || ' ' || strftime('%Y', r.start_date) AS month FROM vehicle AS v JOIN rental AS r ON r.vehicle_id = v.vehicle_id GROUP BY 1, 2, 3 HAVING count(DISTINCT r.customer_id) BETWEEN 2 AND 12`,
		"Which customers rented a {make} {model} in {month}?",
		"List the customers who picked up a {make} {model} during {month}."),
	one(hard, `SELECT round(sum(r.total_price), 2) FROM rental AS r JOIN vehicle AS v ON r.vehicle_id = v.vehicle_id JOIN location AS l ON r.pickup_location_id = l.location_id WHERE l.city = {city} AND v.category = {category}`,
		`SELECT city, category FROM (SELECT DISTINCT city FROM location), (SELECT DISTINCT category FROM vehicle)`,
		"What is the total revenue from {category} rentals picked up in {city}?",
		"How much did rentals of {category} vehicles starting in {city} bring in?"),
	top(hard, 1, "c.license_country", "FROM customer AS c JOIN rental AS r ON r.customer_id = c.customer_id JOIN vehicle AS v ON r.vehicle_id = v.vehicle_id WHERE v.category = {category} GROUP BY c.license_country", "count(*) DESC",
		`SELECT DISTINCT category FROM vehicle`,
		"Customers licensed in which country rent {category} vehicles most often?",
		"Which licence country accounts for the most rentals of {category} cars?"),
	many(hard, `SELECT v.plate FROM vehicle AS v JOIN maintenance AS m ON m.vehicle_id = v.vehicle_id JOIN location AS l ON v.home_location_id = l.location_id WHERE l.city = {city} GROUP BY v.vehicle_id HAVING sum(m.cost) > {n} ORDER BY v.plate`,
		`SELECT DISTINCT city, n FROM location, (SELECT 500 AS n UNION SELECT 1000 UNION SELECT 1500)`,
		"Which vehicles based in {city} have cost more than {n} in maintenance? Give their plates.",
		"List the plates of the {city} cars whose maintenance costs exceed {n} in total."),
	one(hard, `SELECT sum(r.km_driven) FROM rental AS r JOIN customer AS c ON r.customer_id = c.customer_id JOIN vehicle AS v ON r.vehicle_id = v.vehicle_id WHERE c.license_country = {country} AND v.category = {category}`,
		`SELECT country, category FROM (SELECT DISTINCT license_country AS country FROM customer), (SELECT DISTINCT category FROM vehicle)`,
		"How many kilometres in total have customers licensed in {country} driven in {category} vehicles?",
		"Sum the distance driven in {category} cars by customers whose licence is from {country}."),
}
