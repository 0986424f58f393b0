package bundled

// Restaurant chain: restaurants, staff, menu, guest orders, order lines and
// hygiene inspections.

var restaurantMenu = []struct {
	course string
	dishes []string
	base   float64
}{
	{"Starter", []string{"Tomato Bruschetta", "French Onion Soup", "Burrata Salad", "Garlic Prawns", "Beef Carpaccio", "Falafel Plate", "Smoked Salmon Toast", "Caesar Salad", "Stuffed Mushrooms", "Chicken Wings"}, 9},
	{"Main", []string{"Margherita Pizza", "Spaghetti Carbonara", "Grilled Salmon", "Ribeye Steak", "Mushroom Risotto", "Chicken Tikka Masala", "Vegetable Curry", "Fish and Chips", "Lamb Tagine", "Cheeseburger", "Pad Thai", "Eggplant Parmigiana"}, 19},
	{"Dessert", []string{"Tiramisu", "Chocolate Fondant", "Lemon Tart", "Creme Brulee", "Apple Crumble", "Cheesecake", "Panna Cotta", "Ice Cream Trio"}, 8},
	{"Drink", []string{"Espresso", "Cappuccino", "Fresh Orange Juice", "Sparkling Water", "House Red Wine", "House White Wine", "Craft Lager", "Lemonade", "Iced Tea", "Mango Smoothie"}, 5},
}

// restaurantVegetarian lists the dishes without meat or fish.
var restaurantVegetarian = map[string]bool{
	"Tomato Bruschetta": true, "French Onion Soup": true, "Burrata Salad": true, "Falafel Plate": true, "Stuffed Mushrooms": true,
	"Margherita Pizza": true, "Mushroom Risotto": true, "Vegetable Curry": true, "Eggplant Parmigiana": true,
	"Tiramisu": true, "Chocolate Fondant": true, "Lemon Tart": true, "Creme Brulee": true, "Apple Crumble": true, "Cheesecake": true, "Panna Cotta": true, "Ice Cream Trio": true,
	"Espresso": true, "Cappuccino": true, "Fresh Orange Juice": true, "Sparkling Water": true, "House Red Wine": true, "House White Wine": true, "Craft Lager": true, "Lemonade": true, "Iced Tea": true, "Mango Smoothie": true,
}

var restaurantRoles = []struct {
	role  string
	count int
	wage  float64
}{
	{"Manager", 1, 32}, {"Head Chef", 1, 30}, {"Sous Chef", 2, 24}, {"Line Cook", 4, 19}, {"Waiter", 6, 15}, {"Host", 2, 14}, {"Dishwasher", 2, 13},
}

func buildRestaurant(g *gen) []*table {
	cities := []string{"Lisbon", "Porto", "Madrid", "Barcelona", "Valencia", "Seville", "Bilbao", "Malaga", "Granada", "Coimbra"}
	restaurant := g.table(tableSpec{name: "restaurant", rows: len(cities), columns: []column{
		{"restaurant_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", func(r *row) any { return "Casa Verde " + cities[r.i] }},
		{"city TEXT NOT NULL", each(cities)},
		{"opened_date TEXT NOT NULL", dateBetween("2010-01-01", "2022-06-30")},
		{"seats INTEGER NOT NULL", func(r *row) any { return 10 * r.g.between(4, 16) }},
	}})
	employee := newTable("employee", `
employee_id INTEGER PRIMARY KEY,
name TEXT NOT NULL,
restaurant_id INTEGER NOT NULL,
role TEXT NOT NULL,
hourly_wage REAL NOT NULL,
hire_date TEXT NOT NULL,
FOREIGN KEY (restaurant_id) REFERENCES restaurant (restaurant_id)`)
	waiters := map[int][]int{}
	names := g.people(220)
	for r := 1; r <= restaurant.len(); r++ {
		for _, ro := range restaurantRoles {
			for range ro.count + g.intn(2) {
				id := employee.len() + 1
				employee.add(id, names[(id-1)%len(names)], r, // a redrawn instance may need more than 220 (instance.go)
					ro.role, round(ro.wage*(0.9+0.3*g.r.Float64()), 2), g.date("2012-01-01", "2024-03-31"))
				if ro.role == "Waiter" {
					waiters[r] = append(waiters[r], id)
				}
			}
		}
	}
	menu := newTable("menu_item", `
menu_item_id INTEGER PRIMARY KEY,
name TEXT NOT NULL,
course TEXT NOT NULL,
price REAL NOT NULL,
is_vegetarian INTEGER NOT NULL,
calories INTEGER NOT NULL`)
	for _, c := range restaurantMenu {
		for _, d := range c.dishes {
			veg := 0
			if restaurantVegetarian[d] {
				veg = 1
			}
			menu.add(menu.len()+1, d, c.course, round(c.base*(0.7+0.8*g.r.Float64()), 1), veg, 10*g.between(5, 95))
		}
	}
	order, line := restaurantOrders(g, restaurant, menu, waiters)
	return []*table{restaurant, employee, menu, order, line, restaurantInspections(g, restaurant)}
}

// restaurantOrders makes guest orders, each served by a waiter of the
// restaurant, with one to five order lines.
func restaurantOrders(g *gen, restaurant, menu *table, waiters map[int][]int) (*table, *table) {
	order := newTable("guest_order", `
order_id INTEGER PRIMARY KEY,
restaurant_id INTEGER NOT NULL,
waiter_id INTEGER NOT NULL,
order_date TEXT NOT NULL,
table_number INTEGER NOT NULL,
party_size INTEGER NOT NULL,
FOREIGN KEY (restaurant_id) REFERENCES restaurant (restaurant_id),
FOREIGN KEY (waiter_id) REFERENCES employee (employee_id)`)
	line := newTable("order_line", `
order_line_id INTEGER PRIMARY KEY,
order_id INTEGER NOT NULL,
menu_item_id INTEGER NOT NULL,
quantity INTEGER NOT NULL,
FOREIGN KEY (order_id) REFERENCES guest_order (order_id),
FOREIGN KEY (menu_item_id) REFERENCES menu_item (menu_item_id)`)
	for i := range 2600 {
		r := 1 + g.skewed(restaurant.len())
		ws := waiters[r]
		party := 1 + g.skewed(8)
		order.add(i+1, r, ws[g.skewed(len(ws))], g.date("2023-01-01", "2024-06-30"), g.between(1, 24), party)
		used := map[int]bool{}
		for range g.between(1, 5) {
			m := 1 + g.skewed(menu.len())
			if !used[m] {
				used[m] = true
				line.add(line.len()+1, i+1, m, 1+g.intn(party))
			}
		}
	}
	return order, line
}

// restaurantInspections inspects each restaurant every four to nine months
// from early 2019.
func restaurantInspections(g *gen, restaurant *table) *table {
	inspection := newTable("inspection", `
inspection_id INTEGER PRIMARY KEY,
restaurant_id INTEGER NOT NULL,
inspection_date TEXT NOT NULL,
score INTEGER NOT NULL,
inspector TEXT NOT NULL,
FOREIGN KEY (restaurant_id) REFERENCES restaurant (restaurant_id)`)
	inspectors := g.people(6)
	for r := 1; r <= restaurant.len(); r++ {
		day := g.date("2019-01-01", "2019-06-30")
		for day < "2024-07-01" {
			inspection.add(inspection.len()+1, r, day, g.between(62, 100), g.pick(inspectors))
			day = addDays(day, g.between(120, 260))
		}
	}
	return inspection
}

var restaurantTemplates = []tmpl{
	// Easy: one table.
	one(easy, `SELECT count(*) FROM menu_item WHERE course = {course} AND is_vegetarian = 1`, `SELECT DISTINCT course, lower(course) || 's' AS courses FROM menu_item`,
		"How many vegetarian {courses} are on the menu?",
		"Count the menu items in the {course} course that are vegetarian."),
	one(easy, `SELECT round(avg(price), 2) FROM menu_item WHERE course = {course}`, `SELECT DISTINCT course, lower(course) AS word FROM menu_item`,
		"What is the average price of a {word} on the menu?",
		"On average, how much does a dish of the {course} course cost?"),
	many(easy, `SELECT name FROM menu_item WHERE course = {course} AND is_vegetarian = {veg} ORDER BY name`,
		`SELECT DISTINCT course, is_vegetarian AS veg, lower(course) || 's' AS courses, CASE is_vegetarian WHEN 1 THEN 'vegetarian' ELSE 'non-vegetarian' END AS kind FROM menu_item WHERE course <> 'Drink'`,
		"Which {kind} {courses} does the menu offer?",
		"List the {kind} dishes of the {course} course."),
	top(easy, 1, "name", "FROM menu_item WHERE course = {course}", "calories DESC", `SELECT DISTINCT course, lower(course) AS word FROM menu_item`,
		"Which {word} on the menu has the most calories?",
		"What is the most calorific item of the {course} course?"),
	one(easy, `SELECT count(*) FROM employee WHERE role = {role} AND hire_date >= {day}`,
		`SELECT DISTINCT role, strftime('%Y', hire_date) || '-01-01' AS day, strftime('%Y', hire_date) AS year FROM employee WHERE hire_date >= '2016'`,
		"How many employees with the role {role} were hired in {year} or later?",
		"Count the staff in the role {role} hired since the start of {year}."),
	one(easy, `SELECT max(hourly_wage) FROM employee WHERE role = {role}`, `SELECT DISTINCT role FROM employee`,
		"What is the highest hourly wage paid to an employee with the role {role}?",
		"How much does the best-paid person in the role {role} earn per hour?"),
	one(easy, `SELECT count(*) FROM guest_order WHERE strftime('%Y-%m', order_date) = {ym}`,
		`SELECT DISTINCT strftime('%Y-%m', order_date) AS ym, `+monthName("order_date")+` || ' ' || strftime('%Y', order_date) AS month FROM guest_order`,
		"How many guest orders were placed in {month}?",
		"What is the number of orders taken across the chain in {month}?"),
	one(easy, `SELECT round(avg(party_size), 2) FROM guest_order WHERE table_number = {table}`, `SELECT DISTINCT table_number AS "table" FROM guest_order`,
		"Across all restaurants, what is the average party size of the orders at table number {table}?"),
	one(easy, `SELECT count(*) FROM inspection WHERE score < {n} AND strftime('%Y', inspection_date) = {year}`,
		`SELECT DISTINCT strftime('%Y', inspection_date) AS year, n FROM inspection, (SELECT 75 AS n UNION SELECT 85)`,
		"How many inspections in {year} gave a score below {n}?",
		"Count the {year} hygiene inspections that scored less than {n}."),
	many(easy, `SELECT role, count(*) FROM employee WHERE strftime('%Y', hire_date) = {year} GROUP BY role ORDER BY role`,
		`SELECT DISTINCT strftime('%Y', hire_date) AS year FROM employee`,
		"Which roles had new hires in {year}, and how many hires each?",
		"List the roles hired for in {year} with the number of people hired."),

	// Medium: two tables.
	many(medium, `SELECT e.name FROM employee AS e JOIN restaurant AS r ON e.restaurant_id = r.restaurant_id WHERE r.name = {restaurant} AND e.role = {role} ORDER BY e.name`,
		`SELECT r.name AS restaurant, e.role, lower(e.role) || 's' AS roles FROM employee AS e JOIN restaurant AS r ON e.restaurant_id = r.restaurant_id GROUP BY 1, 2 HAVING count(*) >= 2`,
		"Who are the {roles} of {restaurant}?",
		"List the employees of {restaurant} working as {role}."),
	one(medium, `SELECT count(*) FROM guest_order AS o JOIN restaurant AS r ON o.restaurant_id = r.restaurant_id WHERE r.city = {city} AND strftime('%Y', o.order_date) = {year}`,
		`SELECT city, year FROM restaurant, (SELECT DISTINCT strftime('%Y', order_date) AS year FROM guest_order)`,
		"How many orders did the restaurant in {city} take in {year}?",
		"In {year}, how many guest orders were recorded in {city}?"),
	one(medium, `SELECT round(avg(i.score), 1) FROM inspection AS i JOIN restaurant AS r ON i.restaurant_id = r.restaurant_id WHERE r.name = {restaurant}`,
		`SELECT name AS restaurant FROM restaurant`,
		"What is the average inspection score of {restaurant}?",
		"On average, how did {restaurant} score in hygiene inspections?"),
	top(medium, 1, "i.score", "FROM inspection AS i JOIN restaurant AS r ON i.restaurant_id = r.restaurant_id WHERE r.name = {restaurant}", "i.inspection_date DESC",
		`SELECT name AS restaurant FROM restaurant`,
		"What score did {restaurant} get at its most recent inspection?",
		"How did {restaurant} score in its latest hygiene inspection?"),
	top(medium, 1, "m.name", "FROM menu_item AS m JOIN order_line AS l ON l.menu_item_id = m.menu_item_id WHERE m.course = {course} GROUP BY m.menu_item_id", "sum(l.quantity) DESC",
		`SELECT DISTINCT course, lower(course) AS word FROM menu_item`,
		"Which {word} is ordered most often, counting quantities?",
		"What is the best-selling item of the {course} course by quantity ordered?"),
	top(medium, 1, "e.name", "FROM employee AS e JOIN guest_order AS o ON o.waiter_id = e.employee_id WHERE strftime('%Y', o.order_date) = {year} GROUP BY e.employee_id", "count(*) DESC",
		`SELECT DISTINCT strftime('%Y', order_date) AS year FROM guest_order`,
		"Which waiter served the most orders in {year}?",
		"Who took the largest number of guest orders in {year}?"),
	one(medium, `SELECT round(sum(e.hourly_wage), 2) FROM employee AS e JOIN restaurant AS r ON e.restaurant_id = r.restaurant_id WHERE r.name = {restaurant}`,
		`SELECT name AS restaurant FROM restaurant`,
		"What is the combined hourly wage of all staff at {restaurant}?",
		"If every employee of {restaurant} works one hour, what does it cost in wages?"),
	many(medium, `SELECT r.name, max(i.score) FROM restaurant AS r JOIN inspection AS i ON i.restaurant_id = r.restaurant_id WHERE strftime('%Y', i.inspection_date) = {year} GROUP BY r.name ORDER BY r.name`,
		`SELECT DISTINCT strftime('%Y', inspection_date) AS year FROM inspection`,
		"For each restaurant inspected in {year}, what was its best inspection score that year?",
		"Give every restaurant's name and highest inspection score in {year}."),

	// Hard: three tables or more.
	one(hard, `SELECT round(sum(l.quantity * m.price), 2) FROM order_line AS l JOIN menu_item AS m ON l.menu_item_id = m.menu_item_id JOIN guest_order AS o ON l.order_id = o.order_id JOIN restaurant AS r ON o.restaurant_id = r.restaurant_id WHERE r.name = {restaurant} AND strftime('%Y-%m', o.order_date) = {ym}`,
		`SELECT name AS restaurant, ym, month FROM restaurant, (SELECT DISTINCT strftime('%Y-%m', order_date) AS ym, `+monthName("order_date")+` || ' ' || strftime('%Y', order_date) AS month FROM guest_order)`,
		"What was the revenue of {restaurant} in {month}, at menu prices?",
		"How much did guests of {restaurant} spend in {month}, based on menu prices?"),
	top(hard, 1, "m.name", "FROM menu_item AS m JOIN order_line AS l ON l.menu_item_id = m.menu_item_id JOIN guest_order AS o ON l.order_id = o.order_id JOIN restaurant AS r ON o.restaurant_id = r.restaurant_id WHERE r.name = {restaurant} AND m.course = 'Main' GROUP BY m.menu_item_id", "sum(l.quantity) DESC",
		`SELECT name AS restaurant FROM restaurant`,
		"Which main course is the most popular at {restaurant}, by quantity ordered?",
		"What is the best-selling main dish of {restaurant}?"),
	many(hard, `SELECT DISTINCT m.name FROM menu_item AS m JOIN order_line AS l ON l.menu_item_id = m.menu_item_id JOIN guest_order AS o ON l.order_id = o.order_id JOIN restaurant AS r ON o.restaurant_id = r.restaurant_id WHERE r.name = {restaurant} AND o.order_date = {day} ORDER BY m.name`,
		`SELECT r.name AS restaurant, o.order_date AS day FROM guest_order AS o JOIN restaurant AS r ON o.restaurant_id = r.restaurant_id JOIN order_line AS l ON l.order_id = o.order_id GROUP BY 1, 2 HAVING count(DISTINCT l.menu_item_id) BETWEEN 3 AND 12`,
		"Which menu items were ordered at {restaurant} on {day}?",
		"List the dishes and drinks served at {restaurant} on {day}."),
	many(hard, `SELECT e.name FROM employee AS e JOIN guest_order AS o ON o.waiter_id = e.employee_id JOIN restaurant AS r ON e.restaurant_id = r.restaurant_id WHERE r.city = {city} GROUP BY e.employee_id HAVING sum(o.party_size) > {n} ORDER BY e.name`,
		`SELECT city, n FROM restaurant, (SELECT 100 AS n UNION SELECT 200 UNION SELECT 400)`,
		"Which waiters in {city} have served more than {n} guests in total?",
		"List the waiters of the {city} restaurant whose orders add up to over {n} guests."),
	one(hard, `SELECT sum(l.quantity) FROM order_line AS l JOIN menu_item AS m ON l.menu_item_id = m.menu_item_id JOIN guest_order AS o ON l.order_id = o.order_id WHERE m.is_vegetarian = 1 AND m.course = 'Main' AND strftime('%Y', o.order_date) = {year}`,
		`SELECT DISTINCT strftime('%Y', order_date) AS year FROM guest_order`,
		"How many vegetarian main courses were ordered in {year}?",
		"In {year}, what quantity of vegetarian mains did the chain sell?"),
}
