package bundled

import (
	"fmt"
	"strings"
)

// Music streaming: artists, albums, tracks, listeners, streams and playlists.

var (
	musicGenres  = []string{"Pop", "Rock", "Hip Hop", "Electronic", "Jazz", "Indie", "Folk", "R&B", "Metal", "Classical", "Reggae", "Country"}
	musicLabels  = []string{"Northern Lights Records", "Blue Harbor Music", "Sundial Recordings", "Echo Park Records", "Granite Sound", "Independent"}
	musicPlans   = []string{"Free", "Premium", "Family", "Student"}
	musicWords   = []string{"Midnight", "Paper", "Neon", "Golden", "Electric", "Summer", "Broken", "Wild", "Lonely", "Silver", "Velvet", "Ocean", "Stone", "Fire", "Glass", "Satellite", "Cherry", "Thunder", "Honey", "Marble"}
	musicNouns   = []string{"Hearts", "Drive", "Lights", "Dreams", "Waves", "Roads", "Skies", "Bones", "Echoes", "Rain", "Love", "Nights", "Youth", "Shadows", "Flowers", "Wires", "Letters", "Machines", "Tigers", "Rivers"}
	musicMoods   = []string{"Road Trip", "Sunday Morning", "Workout", "Late Night", "Focus", "Party", "Chill", "Rainy Day", "Summer", "Throwback"}
	musicMoodEnd = []string{"Mix", "Vibes", "Classics", "Favourites", "Essentials", "Jams"}
)

func buildMusic(g *gen) []*table {
	band := func() string {
		if g.chance(0.5) {
			return g.person()
		}
		return "The " + g.pick(musicWords) + " " + g.pick(musicNouns)
	}
	countries := []string{"United States", "United Kingdom", "Sweden", "Canada", "Australia", "Germany", "France", "Norway", "Brazil", "Japan", "South Korea", "Ireland"}
	bands := g.distinct(80, band)
	artist := g.table(tableSpec{name: "artist", rows: len(bands), columns: []column{
		{"artist_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", each(bands)},
		{"country TEXT NOT NULL", skewedOneOf(countries)},
		{"formed_year INTEGER NOT NULL", between(1965, 2020)},
	}})
	album := newTable("album", `
album_id INTEGER PRIMARY KEY,
title TEXT NOT NULL,
artist_id INTEGER NOT NULL,
release_year INTEGER NOT NULL,
genre TEXT NOT NULL,
label TEXT NOT NULL,
FOREIGN KEY (artist_id) REFERENCES artist (artist_id)`)
	genreOf := map[int]string{}
	for i, title := range g.distinct(260, g.title) {
		a := 1 + g.skewed(80)
		if _, ok := genreOf[a]; !ok {
			genreOf[a] = g.pickSkewed(musicGenres)
		}
		album.add(i+1, title, a, min(artist.rows[a-1][3].(int)+g.between(0, 30), 2024), genreOf[a], g.pickSkewed(musicLabels))
	}
	track := newTable("track", `
track_id INTEGER PRIMARY KEY,
title TEXT NOT NULL,
album_id INTEGER NOT NULL,
track_number INTEGER NOT NULL,
duration_seconds INTEGER NOT NULL,
explicit INTEGER NOT NULL,
FOREIGN KEY (album_id) REFERENCES album (album_id)`)
	for a := 1; a <= album.len(); a++ {
		for n := 1; n <= g.between(6, 14); n++ {
			title := g.pick(musicWords) + " " + g.pick(musicNouns)
			track.add(track.len()+1, title, a, n, g.between(125, 420), map[bool]int{true: 1, false: 0}[g.chance(0.2)])
		}
	}
	users := g.distinct(700, func() string {
		return fmt.Sprintf("%s_%s%d", strings.ToLower(g.pick(firstNames)), strings.ToLower(g.pick(musicNouns)), g.between(1, 99))
	})
	listener := g.table(tableSpec{name: "listener", rows: len(users), columns: []column{
		{"listener_id INTEGER PRIMARY KEY", rowID},
		{"username TEXT NOT NULL UNIQUE", each(users)},
		{"country TEXT NOT NULL", skewedOneOf(countries)},
		{"plan TEXT NOT NULL", skewedOneOf(musicPlans)},
		{"birth_year INTEGER NOT NULL", between(1960, 2008)},
		{"signup_date TEXT NOT NULL", dateBetween("2016-01-01", "2023-12-31")},
	}})
	return append([]*table{artist, album, track, listener}, musicActivity(g, track, listener)...)
}

// musicActivity makes streams and playlists.
func musicActivity(g *gen, track, listener *table) []*table {
	stream := newTable("stream", `
stream_id INTEGER PRIMARY KEY,
listener_id INTEGER NOT NULL,
track_id INTEGER NOT NULL,
stream_date TEXT NOT NULL,
seconds_played INTEGER NOT NULL,
FOREIGN KEY (listener_id) REFERENCES listener (listener_id),
FOREIGN KEY (track_id) REFERENCES track (track_id)`)
	for i := range 7000 {
		t := 1 + g.skewed(track.len())
		stream.add(i+1, 1+g.skewed(listener.len()), t, g.date("2023-01-01", "2024-06-30"), g.between(30, track.rows[t-1][4].(int)))
	}
	playlist := newTable("playlist", `
playlist_id INTEGER PRIMARY KEY,
listener_id INTEGER NOT NULL,
name TEXT NOT NULL,
created_date TEXT NOT NULL,
FOREIGN KEY (listener_id) REFERENCES listener (listener_id)`)
	entry := newTable("playlist_track", `
playlist_id INTEGER NOT NULL,
track_id INTEGER NOT NULL,
position INTEGER NOT NULL,
PRIMARY KEY (playlist_id, track_id),
FOREIGN KEY (playlist_id) REFERENCES playlist (playlist_id),
FOREIGN KEY (track_id) REFERENCES track (track_id)`)
	for i := range 300 {
		playlist.add(i+1, 1+g.intn(listener.len()), g.pick(musicMoods)+" "+g.pick(musicMoodEnd), g.date("2020-01-01", "2024-06-30"))
		in := map[int]bool{}
		for n := 1; n <= g.between(3, 15); n++ {
			t := 1 + g.intn(track.len())
			if !in[t] {
				in[t] = true
				entry.add(i+1, t, len(in))
			}
		}
	}
	return []*table{stream, playlist, entry}
}

var musicTemplates = []tmpl{
	// Easy: one table.
	one(easy, `SELECT count(*) FROM album WHERE genre = {genre} AND release_year >= {year}`,
		`SELECT genre, year FROM album, (SELECT 1990 AS year UNION SELECT 2000 UNION SELECT 2010) GROUP BY 1, 2`,
		"How many {genre} albums were released in {year} or later?",
		"Count the {genre} albums whose release year is {year} or after."),
	one(easy, `SELECT count(*) FROM track WHERE duration_seconds > {secs}`,
		`SELECT 180 AS secs, 3 AS minutes UNION SELECT 240, 4 UNION SELECT 300, 5 UNION SELECT 360, 6`,
		"How many tracks are longer than {minutes} minutes?",
		"Count the tracks that last more than {secs} seconds."),
	one(easy, `SELECT count(*) FROM listener WHERE plan = {plan} AND country = {country}`,
		`SELECT DISTINCT plan, country FROM listener`,
		"How many listeners whose country is {country} are on the {plan} plan?",
		"Count the {plan}-plan listeners with {country} as their country."),
	many(easy, `SELECT name FROM artist WHERE country = {country} ORDER BY name`,
		`SELECT country FROM artist GROUP BY 1 HAVING count(*) BETWEEN 2 AND 15`,
		"Which artists come from {country}?",
		"List the artists whose country is {country}."),
	top(easy, 1, "name", "FROM artist WHERE country = {country}", "formed_year ASC", `SELECT DISTINCT country FROM artist`,
		"Which artist from the country {country} has been active the longest, judging by formation year?",
		"Among artists whose country is {country}, which one was formed earliest?"),
	one(easy, `SELECT count(*) FROM stream WHERE strftime('%Y-%m', stream_date) = {ym}`,
		`SELECT DISTINCT strftime('%Y-%m', stream_date) AS ym, `+monthName("stream_date")+` || ' ' || strftime('%Y', stream_date) AS month FROM stream`,
		"How many streams were recorded in {month}?",
		"How many times were tracks streamed in {month}?"),
	one(easy, `SELECT round(sum(seconds_played) / 3600.0, 1) FROM stream WHERE strftime('%Y-%m', stream_date) = {ym}`,
		`SELECT DISTINCT strftime('%Y-%m', stream_date) AS ym, `+monthName("stream_date")+` || ' ' || strftime('%Y', stream_date) AS month FROM stream`,
		"How many hours of music were streamed in {month}?",
		"What was the total listening time in hours during {month}?"),
	many(easy, `SELECT label, count(*) FROM album WHERE genre = {genre} GROUP BY label ORDER BY label`,
		`SELECT DISTINCT genre FROM album`,
		"Which labels have released {genre} albums, and how many each?",
		"List the record labels with {genre} albums and the number of such albums."),
	one(easy, `SELECT count(*) FROM listener WHERE strftime('%Y', signup_date) = {year}`, `SELECT DISTINCT strftime('%Y', signup_date) AS year FROM listener`,
		"How many listeners signed up in {year}?",
		"What is the number of new listener accounts created in {year}?"),
	one(easy, `SELECT round(avg(duration_seconds), 1) FROM track WHERE explicit = 1`, "",
		"What is the average duration in seconds of the tracks marked explicit?"),

	// Medium: two tables.
	many(medium, `SELECT al.title FROM album AS al JOIN artist AS ar ON al.artist_id = ar.artist_id WHERE ar.name = {artist} ORDER BY al.title`,
		`SELECT ar.name AS artist FROM artist AS ar JOIN album AS al ON al.artist_id = ar.artist_id GROUP BY ar.artist_id HAVING count(*) BETWEEN 2 AND 12`,
		"Which albums has {artist} released?",
		"List the album titles by {artist}."),
	one(medium, `SELECT count(*) FROM track AS t JOIN album AS al ON t.album_id = al.album_id WHERE al.title = {album}`,
		`SELECT title AS album FROM album`,
		"How many tracks are on the album {album}?",
		"What is the number of tracks of {album}?"),
	top(medium, 1, "t.title", "FROM track AS t JOIN album AS al ON t.album_id = al.album_id WHERE al.title = {album}", "t.duration_seconds DESC",
		`SELECT title AS album FROM album`,
		"What is the longest track on {album}?",
		"Which track of the album {album} has the longest duration?"),
	one(medium, `SELECT round(sum(t.duration_seconds) / 60.0, 1) FROM track AS t JOIN album AS al ON t.album_id = al.album_id WHERE al.title = {album}`,
		`SELECT title AS album FROM album`,
		"How long is the album {album} in minutes?",
		"What is the total running time of {album}, in minutes?"),
	one(medium, `SELECT ar.name FROM artist AS ar JOIN album AS al ON al.artist_id = ar.artist_id WHERE al.title = {album}`,
		`SELECT title AS album FROM album`,
		"Who recorded the album {album}?",
		"Which artist released {album}?"),
	top(medium, 1, "l.username", "FROM listener AS l JOIN stream AS s ON s.listener_id = l.listener_id WHERE l.country = {country} GROUP BY l.listener_id", "count(*) DESC",
		`SELECT DISTINCT country FROM listener`,
		"Which listener with country {country} has streamed the most tracks? Give the username.",
		"Among listeners whose country is {country}, who has the most streams? Give the username."),
	one(medium, `SELECT count(*) FROM playlist AS p JOIN listener AS l ON p.listener_id = l.listener_id WHERE l.plan = {plan}`,
		`SELECT DISTINCT plan FROM listener`,
		"How many playlists were created by listeners on the {plan} plan?",
		"Count the playlists owned by {plan} listeners."),
	many(medium, `SELECT ar.country, count(*) FROM artist AS ar JOIN album AS al ON al.artist_id = ar.artist_id WHERE al.genre = {genre} GROUP BY ar.country ORDER BY ar.country`,
		`SELECT DISTINCT genre FROM album`,
		"Which countries do the artists of {genre} albums come from, and how many of those albums per country?",
		"Break down the {genre} albums by the artist's country, with a count per country."),

	// Hard: three tables or more.
	many(hard, `SELECT t.title FROM track AS t JOIN playlist_track AS pt ON pt.track_id = t.track_id JOIN playlist AS p ON pt.playlist_id = p.playlist_id JOIN listener AS l ON p.listener_id = l.listener_id WHERE p.name = {playlist} AND l.username = {user} ORDER BY pt.position`,
		`SELECT p.name AS playlist, l.username AS user FROM playlist AS p JOIN listener AS l ON p.listener_id = l.listener_id GROUP BY p.name, l.username HAVING count(*) = 1`,
		"Which tracks are on the playlist {playlist} of the user {user}?",
		"List the tracks in {user}'s playlist called {playlist}."),
	top(hard, 1, "ar.name", "FROM artist AS ar JOIN album AS al ON al.artist_id = ar.artist_id JOIN track AS t ON t.album_id = al.album_id JOIN stream AS s ON s.track_id = t.track_id JOIN listener AS l ON s.listener_id = l.listener_id WHERE l.country = {country} GROUP BY ar.artist_id", "count(*) DESC",
		`SELECT DISTINCT country FROM listener`,
		"Which artist is streamed the most by listeners whose country is {country}?",
		"Among listeners with country {country}, which artist has the most streams?"),
	one(hard, `SELECT count(*) FROM stream AS s JOIN track AS t ON s.track_id = t.track_id JOIN album AS al ON t.album_id = al.album_id JOIN listener AS l ON s.listener_id = l.listener_id WHERE al.genre = {genre} AND l.plan = {plan}`,
		`SELECT genre, plan FROM (SELECT DISTINCT genre FROM album), (SELECT DISTINCT plan FROM listener)`,
		"How many {genre} streams came from listeners on the {plan} plan?",
		"Count the streams of {genre} music by {plan} listeners."),
	many(hard, `SELECT ar.name FROM artist AS ar JOIN album AS al ON al.artist_id = ar.artist_id JOIN track AS t ON t.album_id = al.album_id JOIN stream AS s ON s.track_id = t.track_id WHERE strftime('%Y', s.stream_date) = {year} GROUP BY ar.artist_id HAVING count(*) > {n} ORDER BY ar.name`,
		`SELECT DISTINCT strftime('%Y', stream_date) AS year, n FROM stream, (SELECT 100 AS n UNION SELECT 150 UNION SELECT 250)`,
		"Which artists were streamed more than {n} times in {year}?",
		"List the artists with over {n} streams during {year}."),
	one(hard, `SELECT count(DISTINCT s.listener_id) FROM stream AS s JOIN track AS t ON s.track_id = t.track_id JOIN album AS al ON t.album_id = al.album_id JOIN artist AS ar ON al.artist_id = ar.artist_id WHERE ar.name = {artist}`,
		`SELECT name AS artist FROM artist`,
		"How many different listeners have streamed music by {artist}?",
		"Count the distinct listeners who played at least one track by {artist}."),
}
