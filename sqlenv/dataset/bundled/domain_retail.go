package bundled

// Retail store chain: stores, categories, products, customers, sales and
// sale items.

var retailCategories = []struct {
	name  string
	items []string
	base  float64 // typical price
}{
	{"Electronics", []string{"Wireless Headphones", "Bluetooth Speaker", "USB-C Charger", "Smart Watch", "27-inch Monitor", "Mechanical Keyboard", "Webcam", "Power Bank"}, 90},
	{"Home and Kitchen", []string{"Espresso Machine", "Blender", "Chef Knife", "Cast Iron Pan", "Toaster", "Electric Kettle", "Rice Cooker", "Cutting Board"}, 55},
	{"Sports", []string{"Yoga Mat", "Running Shoes", "Tennis Racket", "Dumbbell Set", "Bike Helmet", "Water Bottle", "Football", "Hiking Backpack"}, 45},
	{"Toys", []string{"Building Blocks", "Jigsaw Puzzle", "Plush Bear", "Toy Train", "Board Game", "Stunt Kite", "Remote Control Car", "Doll House"}, 30},
	{"Books", []string{"Cookbook", "Travel Guide", "World Atlas", "Dictionary", "Crime Novel", "Sketchbook", "Weekly Planner", "Comic Album"}, 18},
	{"Clothing", []string{"Rain Jacket", "Wool Sweater", "Denim Jeans", "Cotton T-Shirt", "Silk Scarf", "Winter Gloves", "Canvas Sneakers", "Knit Beanie"}, 40},
	{"Beauty", []string{"Face Cream", "Herbal Shampoo", "Eau de Parfum", "Lip Balm", "Sunscreen SPF 50", "Hair Dryer", "Body Lotion", "Nail Polish"}, 20},
	{"Garden", []string{"Garden Hose", "Pruning Shears", "Clay Flower Pot", "Push Lawn Mower", "Watering Can", "Herb Seed Kit", "Garden Gloves", "Bird Feeder"}, 35},
}

var (
	retailStores = [][2]string{
		{"Oslo Central", "Oslo"}, {"Stockholm Central", "Stockholm"}, {"Copenhagen", "Copenhagen"}, {"Berlin Mitte", "Berlin"},
		{"Hamburg", "Hamburg"}, {"Amsterdam", "Amsterdam"}, {"Oslo West", "Oslo"}, {"Berlin Kreuzberg", "Berlin"},
		{"Vienna", "Vienna"}, {"Zurich", "Zurich"}, {"Stockholm Sodermalm", "Stockholm"}, {"Munich", "Munich"},
	}
	retailBrands   = []string{"Nordvik", "Apex", "Lumo", "Kestrel", "Solace", "Brightline", "Urbano", "Fjell", "Marlow", "Tidewater", "Pinecrest", "Vela"}
	retailPayments = []string{"Card", "Card", "Card", "Cash", "Mobile Wallet", "Gift Card"}
)

func buildRetail(g *gen) []*table {
	store := g.table(tableSpec{name: "store", rows: len(retailStores), columns: []column{
		{"store_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", func(r *row) any { return "Urbanmart " + retailStores[r.i][0] }},
		{"city TEXT NOT NULL", func(r *row) any { return retailStores[r.i][1] }},
		{"opened_date TEXT NOT NULL", dateBetween("2008-01-01", "2021-12-31")},
		{"floor_area_sqm INTEGER NOT NULL", func(r *row) any { return 100 * r.g.between(8, 60) }},
	}})
	category := newTable("category", `
category_id INTEGER PRIMARY KEY,
name TEXT NOT NULL`)
	product := newTable("product", `
product_id INTEGER PRIMARY KEY,
name TEXT NOT NULL,
category_id INTEGER NOT NULL,
brand TEXT NOT NULL,
unit_price REAL NOT NULL,
FOREIGN KEY (category_id) REFERENCES category (category_id)`)
	for ci, c := range retailCategories {
		category.add(ci+1, c.name)
		for _, item := range c.items {
			for _, brand := range g.shuffled(retailBrands)[:g.between(2, 4)] {
				product.add(product.len()+1, brand+" "+item, ci+1, brand, g.money(c.base*0.4, c.base*2.2))
			}
		}
	}
	customers := g.people(1200)
	customer := g.table(tableSpec{name: "customer", rows: len(customers), columns: []column{
		{"customer_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", each(customers)},
		{"email TEXT NOT NULL", func(r *row) any { return email(r.str("name"), "example.com", r.g.intn(100)) }},
		{"city TEXT NOT NULL", func(r *row) any { return store.rows[r.g.skewed(store.len())][2] }}, // a store's
		{"loyalty_member INTEGER NOT NULL", flag(0.4)},
		{"signup_date TEXT NOT NULL", dateBetween("2018-01-01", "2023-12-31")},
	}})
	sale := newTable("sale", `
sale_id INTEGER PRIMARY KEY,
store_id INTEGER NOT NULL,
customer_id INTEGER NOT NULL,
sale_date TEXT NOT NULL,
payment_method TEXT NOT NULL,
FOREIGN KEY (store_id) REFERENCES store (store_id),
FOREIGN KEY (customer_id) REFERENCES customer (customer_id)`)
	item := newTable("sale_item", `
sale_item_id INTEGER PRIMARY KEY,
sale_id INTEGER NOT NULL,
product_id INTEGER NOT NULL,
quantity INTEGER NOT NULL,
unit_price REAL NOT NULL,
FOREIGN KEY (sale_id) REFERENCES sale (sale_id),
FOREIGN KEY (product_id) REFERENCES product (product_id)`)
	for i := range 3200 {
		sale.add(i+1, 1+g.skewed(store.len()), 1+g.skewed(customer.len()), g.date("2022-01-01", "2024-06-30"), g.pick(retailPayments))
		for range g.between(1, 4) {
			p := 1 + g.skewed(product.len())
			price := product.rows[p-1][4].(float64)
			if g.chance(0.2) {
				price = round(price*0.8, 2) // on sale
			}
			item.add(item.len()+1, i+1, p, 1+g.skewed(4), price)
		}
	}
	return []*table{store, category, product, customer, sale, item}
}

var retailTemplates = []tmpl{
	// Easy: one table.
	one(easy, `SELECT count(*) FROM product WHERE brand = {brand}`, `SELECT DISTINCT brand FROM product`,
		"How many products does the brand {brand} have in the catalogue?",
		"Count the products made by {brand}."),
	one(easy, `SELECT count(*) FROM customer WHERE city = {city} AND loyalty_member = 1`, `SELECT DISTINCT city FROM customer`,
		"How many loyalty-programme members live in {city}?",
		"How many customers from {city} belong to the loyalty programme?"),
	one(easy, `SELECT count(*) FROM sale WHERE payment_method = {method} AND strftime('%Y', sale_date) = {year}`,
		`SELECT DISTINCT payment_method AS method, strftime('%Y', sale_date) AS year FROM sale`,
		"How many sales were paid by {method} in {year}?",
		"In {year}, how many purchases used {method} as the payment method?"),
	one(easy, `SELECT round(avg(unit_price), 2) FROM product WHERE brand = {brand}`, `SELECT DISTINCT brand FROM product`,
		"What is the average unit price of {brand} products?",
		"On average, how much do products of the brand {brand} cost?"),
	top(easy, 1, "name", "FROM product WHERE brand = {brand}", "unit_price DESC", `SELECT DISTINCT brand FROM product`,
		"What is the most expensive {brand} product?",
		"Which product by {brand} has the highest unit price?"),
	many(easy, `SELECT name FROM store WHERE opened_date >= {day} ORDER BY name`,
		`SELECT DISTINCT strftime('%Y', opened_date) || '-01-01' AS day, strftime('%Y', opened_date) AS year FROM store`,
		"Which stores opened in {year} or later?",
		"List the stores whose opening date is on or after {day}."),
	many(easy, `SELECT name FROM product WHERE brand = {brand} AND unit_price < {price} ORDER BY name`,
		`SELECT brand, price FROM product, (SELECT 30 AS price UNION SELECT 60) GROUP BY 1, 2`,
		"Which {brand} products cost less than {price}?",
		"List the {brand} products with a unit price under {price}."),
	one(easy, `SELECT count(*) FROM customer WHERE strftime('%Y', signup_date) = {year}`, `SELECT DISTINCT strftime('%Y', signup_date) AS year FROM customer`,
		"How many customers signed up in {year}?",
		"What is the number of customers who registered during {year}?"),
	many(easy, `SELECT payment_method, count(*) FROM sale WHERE strftime('%Y', sale_date) = {year} GROUP BY payment_method ORDER BY payment_method`,
		`SELECT DISTINCT strftime('%Y', sale_date) AS year FROM sale`,
		"For each payment method, how many sales were made in {year}?",
		"Give the number of {year} sales per payment method."),
	one(easy, `SELECT count(DISTINCT brand) FROM product`, "",
		"How many different brands does the chain sell?"),

	// Medium: two tables.
	one(medium, `SELECT count(*) FROM product AS p JOIN category AS c ON p.category_id = c.category_id WHERE c.name = {category}`,
		`SELECT name AS category FROM category`,
		"How many products are in the {category} category?",
		"Count the products listed under {category}."),
	one(medium, `SELECT round(avg(p.unit_price), 2) FROM product AS p JOIN category AS c ON p.category_id = c.category_id WHERE c.name = {category}`,
		`SELECT name AS category FROM category`,
		"What is the average unit price of products in {category}?",
		"How much do products of the {category} category cost on average?"),
	top(medium, 1, "p.name", "FROM product AS p JOIN category AS c ON p.category_id = c.category_id WHERE c.name = {category}", "p.unit_price ASC",
		`SELECT name AS category FROM category`,
		"What is the cheapest product in the {category} category?",
		"Which {category} product has the lowest unit price?"),
	one(medium, `SELECT count(*) FROM sale AS s JOIN store AS st ON s.store_id = st.store_id WHERE st.name = {store} AND strftime('%Y', s.sale_date) = {year}`,
		`SELECT name AS store, year FROM store, (SELECT DISTINCT strftime('%Y', sale_date) AS year FROM sale)`,
		"How many sales did {store} record in {year}?",
		"What is the number of sales made at {store} during {year}?"),
	top(medium, 1, "st.name", "FROM store AS st JOIN sale AS s ON s.store_id = st.store_id WHERE strftime('%Y-%m', s.sale_date) = {ym} GROUP BY st.store_id", "count(*) DESC",
		`SELECT DISTINCT strftime('%Y-%m', sale_date) AS ym, `+monthName("sale_date")+` || ' ' || strftime('%Y', sale_date) AS month FROM sale`,
		"Which store made the most sales in {month}?",
		"In {month}, which store recorded the largest number of sales?"),
	top(medium, 1, "c.name", "FROM customer AS c JOIN sale AS s ON s.customer_id = c.customer_id WHERE c.city = {city} GROUP BY c.customer_id", "count(*) DESC",
		`SELECT DISTINCT city FROM customer`,
		"Which customer from {city} has made the most purchases?",
		"Who is the most frequent shopper among the customers living in {city}?"),
	one(medium, `SELECT sum(si.quantity) FROM sale_item AS si JOIN product AS p ON si.product_id = p.product_id WHERE p.name = {product}`,
		`SELECT name AS product FROM product`,
		"How many units of {product} have been sold?",
		"What is the total quantity sold of the product {product}?"),
	many(medium, `SELECT c.name, count(*) FROM product AS p JOIN category AS c ON p.category_id = c.category_id WHERE p.brand = {brand} GROUP BY c.name ORDER BY c.name`,
		`SELECT DISTINCT brand FROM product`,
		"In which categories does {brand} sell products, and how many in each?",
		"For the brand {brand}, give each category and its number of products."),
	many(medium, `SELECT DISTINCT s.sale_date FROM sale AS s JOIN customer AS c ON s.customer_id = c.customer_id WHERE c.name = {name} ORDER BY s.sale_date`,
		`SELECT c.name FROM customer AS c JOIN sale AS s ON s.customer_id = c.customer_id GROUP BY c.customer_id HAVING count(*) BETWEEN 2 AND 10`,
		"On which dates did {name} make purchases?",
		"List the dates of all purchases by {name}."),

	// Hard: three tables or more.
	one(hard, `SELECT round(sum(si.quantity * si.unit_price), 2) FROM sale_item AS si JOIN sale AS s ON si.sale_id = s.sale_id JOIN store AS st ON s.store_id = st.store_id WHERE st.name = {store} AND strftime('%Y', s.sale_date) = {year}`,
		`SELECT name AS store, year FROM store, (SELECT DISTINCT strftime('%Y', sale_date) AS year FROM sale)`,
		"What was the total revenue of {store} in {year}?",
		"How much money did {store} take in from sales during {year}?"),
	top(hard, 1, "c.name", "FROM category AS c JOIN product AS p ON p.category_id = c.category_id JOIN sale_item AS si ON si.product_id = p.product_id JOIN sale AS s ON si.sale_id = s.sale_id JOIN store AS st ON s.store_id = st.store_id WHERE st.city = {city} GROUP BY c.category_id", "sum(si.quantity * si.unit_price) DESC",
		`SELECT DISTINCT city FROM store`,
		"Which product category brings in the most revenue in the {city} stores?",
		"In {city}, which category has the highest sales revenue?"),
	many(hard, `SELECT DISTINCT p.name FROM product AS p JOIN sale_item AS si ON si.product_id = p.product_id JOIN sale AS s ON si.sale_id = s.sale_id JOIN customer AS c ON s.customer_id = c.customer_id WHERE c.name = {name} ORDER BY p.name`,
		`SELECT c.name FROM customer AS c JOIN sale AS s ON s.customer_id = c.customer_id JOIN sale_item AS si ON si.sale_id = s.sale_id GROUP BY c.customer_id HAVING count(DISTINCT si.product_id) BETWEEN 2 AND 10`,
		"Which products has {name} bought?",
		"List every product purchased by the customer {name}."),
	many(hard, `SELECT c.name FROM customer AS c JOIN sale AS s ON s.customer_id = c.customer_id JOIN sale_item AS si ON si.sale_id = s.sale_id WHERE strftime('%Y', s.sale_date) = {year} GROUP BY c.customer_id HAVING sum(si.quantity * si.unit_price) > {amount} ORDER BY c.name`,
		`SELECT DISTINCT strftime('%Y', sale_date) AS year, amount FROM sale, (SELECT 1500 AS amount UNION SELECT 2500 UNION SELECT 4000)`,
		"Which customers spent more than {amount} in {year}?",
		"List the customers whose purchases in {year} totalled over {amount}."),
	one(hard, `SELECT count(DISTINCT s.customer_id) FROM sale AS s JOIN sale_item AS si ON si.sale_id = s.sale_id JOIN product AS p ON si.product_id = p.product_id JOIN category AS c ON p.category_id = c.category_id WHERE c.name = {category} AND strftime('%Y', s.sale_date) = {year}`,
		`SELECT name AS category, year FROM category, (SELECT DISTINCT strftime('%Y', sale_date) AS year FROM sale)`,
		"How many different customers bought {category} products in {year}?",
		"Count the distinct customers who purchased something from {category} during {year}."),
	top(hard, 3, "p.name", "FROM product AS p JOIN category AS c ON p.category_id = c.category_id JOIN sale_item AS si ON si.product_id = p.product_id WHERE c.name = {category} GROUP BY p.product_id", "sum(si.quantity) DESC",
		`SELECT name AS category FROM category`,
		"What are the three best-selling {category} products by units sold?",
		"List the 3 products of the {category} category that sold the most units."),
}
