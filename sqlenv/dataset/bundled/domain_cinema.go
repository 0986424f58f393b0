package bundled

import "fmt"

// Cinema chain (evaluation): directors, movies, actors and casts, cinemas,
// screenings and tickets.

var (
	cinemaGenres  = []string{"Drama", "Comedy", "Action", "Thriller", "Animation", "Documentary", "Horror", "Science Fiction", "Romance", "Adventure"}
	cinemaRatings = []string{"12A", "15", "PG", "U", "18"}
	cinemaTypes   = []string{"Adult", "Adult", "Adult", "Student", "Child", "Senior"}
	cinemaVenues  = []struct{ name, city string }{
		{"Starlight Manchester", "Manchester"}, {"Starlight Leeds", "Leeds"}, {"Starlight Bristol", "Bristol"},
		{"Starlight Glasgow", "Glasgow"}, {"Starlight Cardiff", "Cardiff"}, {"Starlight Brighton", "Brighton"},
		{"Starlight Liverpool", "Liverpool"}, {"Starlight York", "York"}, {"Starlight Leeds Riverside", "Leeds"},
		{"Starlight Bristol Harbourside", "Bristol"},
	}
)

func buildCinema(g *gen) []*table {
	director := g.peopleTable("director", 50, 1940, 1992)
	titles := g.distinct(300, g.title)
	movie := g.table(tableSpec{name: "movie", rows: len(titles), columns: []column{
		{"movie_id INTEGER PRIMARY KEY", rowID},
		{"title TEXT NOT NULL", each(titles)},
		{"director_id INTEGER NOT NULL", refSkewed(director)},
		{"release_year INTEGER NOT NULL", between(2005, 2024)},
		{"genre TEXT NOT NULL", skewedOneOf(cinemaGenres)},
		{"runtime_minutes INTEGER NOT NULL", between(78, 175)},
		{"age_rating TEXT NOT NULL", skewedOneOf(cinemaRatings)},
	}, constraints: []string{
		"FOREIGN KEY (director_id) REFERENCES director (director_id)",
	}})
	actor := g.peopleTable("actor", 220, 1950, 2008)
	cast := newTable("movie_cast", `
movie_id INTEGER NOT NULL,
actor_id INTEGER NOT NULL,
billing_order INTEGER NOT NULL,
PRIMARY KEY (movie_id, actor_id),
FOREIGN KEY (movie_id) REFERENCES movie (movie_id),
FOREIGN KEY (actor_id) REFERENCES actor (actor_id)`)
	for m := 1; m <= movie.len(); m++ {
		in := map[int]bool{}
		for range g.between(3, 7) {
			a := 1 + g.skewed(actor.len())
			if !in[a] {
				in[a] = true
				cast.add(m, a, len(in))
			}
		}
	}
	cinema := g.table(tableSpec{name: "cinema", rows: len(cinemaVenues), columns: []column{
		{"cinema_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", func(r *row) any { return cinemaVenues[r.i].name }},
		{"city TEXT NOT NULL", func(r *row) any { return cinemaVenues[r.i].city }},
		{"screens INTEGER NOT NULL", between(3, 14)},
	}})
	screening, ticket := cinemaShows(g, movie, cinema)
	return []*table{director, movie, actor, cast, cinema, screening, ticket}
}

// cinemaShows makes screenings of recent movies and the tickets sold.
func cinemaShows(g *gen, movie, cinema *table) (*table, *table) {
	screening := newTable("screening", `
screening_id INTEGER PRIMARY KEY,
movie_id INTEGER NOT NULL,
cinema_id INTEGER NOT NULL,
screening_date TEXT NOT NULL,
start_time TEXT NOT NULL,
screen_number INTEGER NOT NULL,
base_price REAL NOT NULL,
FOREIGN KEY (movie_id) REFERENCES movie (movie_id),
FOREIGN KEY (cinema_id) REFERENCES cinema (cinema_id)`)
	ticket := newTable("ticket", `
ticket_id INTEGER PRIMARY KEY,
screening_id INTEGER NOT NULL,
seat TEXT NOT NULL,
ticket_type TEXT NOT NULL,
price_paid REAL NOT NULL,
FOREIGN KEY (screening_id) REFERENCES screening (screening_id)`)
	var recent []int
	for m, row := range movie.rows {
		if row[3].(int) >= 2022 {
			recent = append(recent, m+1)
		}
	}
	discount := map[string]float64{"Adult": 1, "Student": 0.8, "Child": 0.6, "Senior": 0.7}
	for i := range 2400 {
		c := 1 + g.skewed(cinema.len())
		base := float64(g.between(9, 15)) - 0.01
		screening.add(i+1, recent[g.skewed(len(recent))], c, g.date("2024-01-01", "2024-06-30"),
			fmt.Sprintf("%02d:%02d", g.between(11, 22), 15*g.intn(4)), 1+g.intn(cinema.rows[c-1][3].(int)), base)
		seats := map[string]bool{}
		for range g.skewed(7) {
			seat := fmt.Sprintf("%c%d", 'A'+g.intn(12), g.between(1, 20))
			if !seats[seat] {
				seats[seat] = true
				typ := g.pick(cinemaTypes)
				ticket.add(ticket.len()+1, i+1, seat, typ, round(base*discount[typ], 2))
			}
		}
	}
	return screening, ticket
}

var cinemaTemplates = []tmpl{
	// Easy: one table.
	one(easy, `SELECT count(*) FROM movie WHERE genre = {genre} AND release_year = {year}`,
		`SELECT DISTINCT genre, release_year AS year FROM movie`,
		"How many {genre} movies were released in {year}?",
		"Count the movies of the {genre} genre that came out in {year}."),
	one(easy, `SELECT round(avg(runtime_minutes), 1) FROM movie WHERE genre = {genre}`, `SELECT DISTINCT genre FROM movie`,
		"What is the average running time of {genre} movies, in minutes?",
		"On average, how many minutes does a film of the {genre} genre last?"),
	top(easy, 1, "title", "FROM movie WHERE genre = {genre}", "runtime_minutes DESC", `SELECT DISTINCT genre FROM movie`,
		"Which {genre} movie is the longest?",
		"What is the title of the {genre} film with the longest runtime?"),
	many(easy, `SELECT title FROM movie WHERE release_year = {year} AND age_rating = {rating} ORDER BY title`,
		`SELECT release_year AS year, age_rating AS rating FROM movie GROUP BY 1, 2 HAVING count(*) BETWEEN 2 AND 10`,
		"Which movies released in {year} are rated {rating}?",
		"List the titles of the {year} movies with the age rating {rating}."),
	one(easy, `SELECT count(*) FROM screening WHERE strftime('%Y-%m', screening_date) = {ym} AND start_time >= {time}`,
		`SELECT DISTINCT strftime('%Y-%m', screening_date) AS ym, `+monthName("screening_date")+` AS month, "time" FROM screening, (SELECT '20:00' AS "time" UNION SELECT '18:00')`,
		"How many screenings in {month} 2024 started at {time} or later?",
		"Count the screenings of {month} 2024 with a start time of {time} or later."),
	one(easy, `SELECT round(avg(price_paid), 2) FROM ticket WHERE ticket_type = {type}`, `SELECT DISTINCT ticket_type AS type FROM ticket`,
		"What is the average price paid for tickets of type {type}?",
		"On average, how much did customers pay for {type} tickets?"),
	many(easy, `SELECT name FROM director WHERE nationality = {nat} ORDER BY name`,
		`SELECT nationality AS nat FROM director GROUP BY 1 HAVING count(*) BETWEEN 2 AND 12`,
		"Which directors are {nat}?",
		"List the {nat} directors."),
	many(easy, `SELECT age_rating, count(*) FROM movie WHERE release_year = {year} GROUP BY age_rating ORDER BY age_rating`,
		`SELECT DISTINCT release_year AS year FROM movie`,
		"Which age ratings did the movies of {year} receive, and how many movies got each?",
		"Break down the {year} movies by age rating, with a count per rating."),
	many(easy, `SELECT name FROM cinema WHERE screens >= {n} ORDER BY name`, `SELECT DISTINCT screens AS n FROM cinema`,
		"Which cinemas have at least {n} screens?",
		"List the cinemas with {n} or more screens."),
	one(easy, `SELECT round(sum(price_paid), 2) FROM ticket WHERE ticket_type = {type}`, `SELECT DISTINCT ticket_type AS type FROM ticket`,
		"How much revenue have {type} tickets brought in?",
		"What is the total amount paid for tickets of type {type}?"),

	// Medium: two tables.
	many(medium, `SELECT m.title FROM movie AS m JOIN director AS d ON m.director_id = d.director_id WHERE d.name = {director} ORDER BY m.title`,
		`SELECT d.name AS director FROM director AS d JOIN movie AS m ON m.director_id = d.director_id GROUP BY d.director_id HAVING count(*) BETWEEN 2 AND 15`,
		"Which movies did {director} direct?",
		"List the films directed by {director}."),
	one(medium, `SELECT d.name FROM director AS d JOIN movie AS m ON m.director_id = d.director_id WHERE m.title = {title}`,
		`SELECT title FROM movie`,
		"Who directed {title}?",
		"Which director made the movie {title}?"),
	one(medium, `SELECT count(*) FROM screening AS s JOIN movie AS m ON s.movie_id = m.movie_id WHERE m.title = {title}`,
		`SELECT m.title FROM movie AS m JOIN screening AS s ON s.movie_id = m.movie_id`,
		"How many times has {title} been screened?",
		"Count the screenings of the movie {title}."),
	top(medium, 1, "c.name", "FROM cinema AS c JOIN screening AS s ON s.cinema_id = c.cinema_id WHERE strftime('%Y-%m', s.screening_date) = {ym} GROUP BY c.cinema_id", "count(*) DESC",
		`SELECT DISTINCT strftime('%Y-%m', screening_date) AS ym, `+monthName("screening_date")+` AS month FROM screening`,
		"Which cinema held the most screenings in {month} 2024?",
		"In {month} 2024, which cinema showed the largest number of screenings?"),
	one(medium, `SELECT count(*) FROM movie_cast AS mc JOIN actor AS a ON mc.actor_id = a.actor_id WHERE a.name = {actor}`,
		`SELECT a.name AS actor FROM actor AS a JOIN movie_cast AS mc ON mc.actor_id = a.actor_id`,
		"In how many movies has {actor} appeared?",
		"How many film roles does {actor} have in the database?"),
	top(medium, 1, "d.name", "FROM director AS d JOIN movie AS m ON m.director_id = d.director_id WHERE m.genre = {genre} GROUP BY d.director_id", "count(*) DESC",
		`SELECT DISTINCT genre FROM movie`,
		"Which director has made the most {genre} movies?",
		"Who directed the largest number of {genre} films?"),
	one(medium, `SELECT round(avg(m.runtime_minutes), 1) FROM movie AS m JOIN director AS d ON m.director_id = d.director_id WHERE d.nationality = {nat}`,
		`SELECT DISTINCT nationality AS nat FROM director`,
		"What is the average runtime of movies by {nat} directors?",
		"On average, how many minutes do films directed by {nat} directors last?"),
	many(medium, `SELECT c.name, count(*) FROM cinema AS c JOIN screening AS s ON s.cinema_id = c.cinema_id WHERE s.screening_date = {day} GROUP BY c.name ORDER BY c.name`,
		`SELECT screening_date AS day FROM screening GROUP BY 1 HAVING count(DISTINCT cinema_id) >= 3`,
		"Which cinemas had screenings on {day}, and how many did each have?",
		"List the cinemas showing films on {day} with their number of screenings."),

	// Hard: three tables or more.
	many(hard, `SELECT a.name FROM actor AS a JOIN movie_cast AS mc ON mc.actor_id = a.actor_id JOIN movie AS m ON mc.movie_id = m.movie_id WHERE m.title = {title} ORDER BY mc.billing_order`,
		`SELECT title FROM movie`,
		"Who is in the cast of {title}?",
		"List the actors who appear in {title}."),
	one(hard, `SELECT round(sum(t.price_paid), 2) FROM ticket AS t JOIN screening AS s ON t.screening_id = s.screening_id JOIN movie AS m ON s.movie_id = m.movie_id WHERE m.title = {title}`,
		`SELECT m.title FROM movie AS m JOIN screening AS s ON s.movie_id = m.movie_id JOIN ticket AS t ON t.screening_id = s.screening_id`,
		"How much ticket revenue has {title} earned?",
		"What is the total paid for tickets to screenings of {title}?"),
	top(hard, 1, "m.title", "FROM movie AS m JOIN screening AS s ON s.movie_id = m.movie_id JOIN ticket AS t ON t.screening_id = s.screening_id JOIN cinema AS c ON s.cinema_id = c.cinema_id WHERE c.city = {city} GROUP BY m.movie_id", "count(*) DESC",
		`SELECT DISTINCT city FROM cinema`,
		"Which movie sold the most tickets in {city}?",
		"What was the best-selling film, by tickets, at the cinemas in {city}?"),
	many(hard, `SELECT d.name FROM director AS d JOIN movie AS m ON m.director_id = d.director_id JOIN screening AS s ON s.movie_id = m.movie_id JOIN ticket AS t ON t.screening_id = s.screening_id GROUP BY d.director_id HAVING count(*) > {n} ORDER BY d.name`,
		`SELECT 150 AS n UNION SELECT 250 UNION SELECT 400 UNION SELECT 600`,
		"Which directors' movies have sold more than {n} tickets in total?",
		"List the directors whose films account for over {n} tickets sold."),
	one(hard, `SELECT count(*) FROM ticket AS t JOIN screening AS s ON t.screening_id = s.screening_id JOIN movie AS m ON s.movie_id = m.movie_id WHERE m.genre = {genre} AND strftime('%Y-%m', s.screening_date) = {ym}`,
		`SELECT genre, ym, month FROM (SELECT DISTINCT genre FROM movie), (SELECT DISTINCT strftime('%Y-%m', screening_date) AS ym, `+monthName("screening_date")+` AS month FROM screening)`,
		"How many tickets were sold for {genre} screenings in {month} 2024?",
		"Count the tickets sold in {month} 2024 for films of the {genre} genre."),
	many(hard, `SELECT DISTINCT d.name FROM director AS d JOIN movie AS m ON m.director_id = d.director_id JOIN movie_cast AS mc ON mc.movie_id = m.movie_id JOIN actor AS a ON mc.actor_id = a.actor_id WHERE a.name = {actor} ORDER BY d.name`,
		`SELECT a.name AS actor FROM actor AS a JOIN movie_cast AS mc ON mc.actor_id = a.actor_id JOIN movie AS m ON mc.movie_id = m.movie_id GROUP BY a.actor_id HAVING count(DISTINCT m.director_id) >= 2`,
		"Which directors has {actor} worked with?",
		"List the directors of the movies featuring {actor}."),
}
