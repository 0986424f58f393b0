package bundled

// Football league: stadiums, teams, players, games and goals over two seasons.

var footballClubs = []struct{ team, town, stadium string }{
	{"Northbridge United", "Northbridge", "Northbridge Park"}, {"Riverton City", "Riverton", "Riverside Stadium"},
	{"Ashford Rovers", "Ashford", "The Ashford Ground"}, {"Kingsport Athletic", "Kingsport", "Harbour Road"},
	{"Millbrook Town", "Millbrook", "Mill Lane"}, {"Eastholm Wanderers", "Eastholm", "Eastholm Arena"},
	{"Westcliff Albion", "Westcliff", "Cliffside Stadium"}, {"Stonehaven FC", "Stonehaven", "Granite Park"},
	{"Brookfield Rangers", "Brookfield", "Brookfield Stadium"}, {"Fairhaven Harriers", "Fairhaven", "Harbour View"},
	{"Oakham Olympic", "Oakham", "Oakham Bowl"}, {"Redwater Dynamo", "Redwater", "Red Park"},
	{"Glenmoor Celtic", "Glenmoor", "Glenmoor Field"}, {"Harwick Forest", "Harwick", "Forest Road"},
	{"Lakeside Rovers", "Lakeside", "Lakeside Park"}, {"Southport Phoenix", "Southport", "Phoenix Stadium"},
}

var (
	footballPositions = []string{"Goalkeeper", "Defender", "Defender", "Defender", "Midfielder", "Midfielder", "Midfielder", "Forward", "Forward"}
	footballSeasons   = []struct{ name, start string }{{"2022-23", "2022-08-06"}, {"2023-24", "2023-08-12"}}
)

func buildFootball(g *gen) []*table {
	stadium := newTable("stadium", `
stadium_id INTEGER PRIMARY KEY,
name TEXT NOT NULL,
city TEXT NOT NULL,
capacity INTEGER NOT NULL,
opened_year INTEGER NOT NULL`)
	team := newTable("team", `
team_id INTEGER PRIMARY KEY,
name TEXT NOT NULL,
city TEXT NOT NULL,
founded_year INTEGER NOT NULL,
stadium_id INTEGER NOT NULL,
coach TEXT NOT NULL,
FOREIGN KEY (stadium_id) REFERENCES stadium (stadium_id)`)
	coaches := g.people(len(footballClubs))
	for i, c := range footballClubs {
		stadium.add(i+1, c.stadium, c.town, 1000*g.between(8, 60), g.between(1898, 2015))
		team.add(i+1, c.team, c.town, g.between(1875, 1950), i+1, coaches[i])
	}
	const squadSize = 24
	names := g.people(len(footballClubs) * squadSize)
	player := g.table(tableSpec{name: "player", rows: len(names), columns: []column{
		{"player_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", each(names)},
		{"team_id INTEGER NOT NULL", func(r *row) any { return 1 + r.i/squadSize }},
		{"position TEXT NOT NULL", func(r *row) any { return footballPositions[(r.i%squadSize)*len(footballPositions)/squadSize] }},
		{"nationality TEXT NOT NULL", skewedOneOf(nationalities)},
		{"birth_date TEXT NOT NULL", dateBetween("1988-01-01", "2005-12-31")},
		{"shirt_number INTEGER NOT NULL", func(r *row) any { return 1 + r.i%squadSize + r.g.intn(2)*30 }},
		{"market_value REAL NOT NULL", realBetween(0.3, 45, 1)},
	}, constraints: []string{
		"FOREIGN KEY (team_id) REFERENCES team (team_id)",
	}})
	game, goal := footballGames(g, team, footballScorers(player))
	return []*table{stadium, team, player, game, goal}
}

// footballGames plays a double round robin per season and records the
// goals, scored mostly by forwards (squads weights the scorers).
func footballGames(g *gen, team *table, squads map[int][]int) (*table, *table) {
	game := newTable("game", `
game_id INTEGER PRIMARY KEY,
season TEXT NOT NULL,
match_date TEXT NOT NULL,
home_team_id INTEGER NOT NULL,
away_team_id INTEGER NOT NULL,
home_goals INTEGER NOT NULL,
away_goals INTEGER NOT NULL,
attendance INTEGER NOT NULL,
FOREIGN KEY (home_team_id) REFERENCES team (team_id),
FOREIGN KEY (away_team_id) REFERENCES team (team_id)`)
	goal := newTable("goal", `
goal_id INTEGER PRIMARY KEY,
game_id INTEGER NOT NULL,
player_id INTEGER NOT NULL,
minute INTEGER NOT NULL,
is_penalty INTEGER NOT NULL,
FOREIGN KEY (game_id) REFERENCES game (game_id),
FOREIGN KEY (player_id) REFERENCES player (player_id)`)
	n := team.len()
	strength := make([]float64, n+1)
	for t := 1; t <= n; t++ {
		strength[t] = 0.6 + g.r.Float64()
	}
	for _, s := range footballSeasons {
		round := 0
		for h := 1; h <= n; h++ {
			for a := 1; a <= n; a++ {
				if h == a {
					continue
				}
				day := addDays(s.start, 7*(round%30)+g.intn(3))
				round++
				hg, ag := goals(g, 1.5*strength[h]/strength[a]), goals(g, 1.1*strength[a]/strength[h])
				game.add(game.len()+1, s.name, day, h, a, hg, ag, 4000+g.intn(50000))
				for i := range hg + ag {
					side := h
					if i >= hg {
						side = a
					}
					sq := squads[side]
					goal.add(goal.len()+1, game.len(), sq[g.intn(len(sq))], g.between(1, 94), map[bool]int{true: 1, false: 0}[g.chance(0.1)])
				}
			}
		}
	}
	return game, goal
}

// footballScorers lists, per team, its outfield players, each as many times
// as their position's weight in the choice of a goal's scorer.
func footballScorers(player *table) map[int][]int {
	weight := map[string]int{"Defender": 1, "Midfielder": 3, "Forward": 6}
	squads := map[int][]int{}
	for i, p := range player.rows {
		t, pos := p[2].(int), p[3].(string)
		for range weight[pos] {
			squads[t] = append(squads[t], i+1)
		}
	}
	return squads
}

// goals draws a number of goals with the given mean: a binomial over eight
// chances, close to the Poisson law of football scores.
func goals(g *gen, mean float64) int {
	k := 0
	for range 8 {
		if g.r.Float64() < mean/8 {
			k++
		}
	}
	return k
}

var footballTemplates = []tmpl{
	// Easy: one table.
	one(easy, `SELECT count(*) FROM player WHERE position = {position} AND nationality = {nat}`,
		`SELECT DISTINCT position, nationality AS nat, lower(position) || 's' AS roles FROM player`,
		"How many {nat} {roles} are there in the league?",
		"Count the {roles} of {nat} nationality."),
	one(easy, `SELECT count(*) FROM game WHERE season = {season} AND home_goals > away_goals`, `SELECT DISTINCT season FROM game`,
		"How many games of the {season} season ended in a home win?",
		"In the {season} season, how many matches did the home side win?"),
	one(easy, `SELECT count(*) FROM game WHERE season = {season} AND home_goals = away_goals`, `SELECT DISTINCT season FROM game`,
		"How many games in the {season} season were draws?",
		"Count the drawn matches of the {season} season."),
	one(easy, `SELECT round(avg(attendance), 1) FROM game WHERE season = {season} AND strftime('%m', match_date) = {mm}`,
		`SELECT DISTINCT season, strftime('%m', match_date) AS mm, `+monthName("match_date")+` AS month FROM game`,
		"What was the average attendance of the {season} games played in {month}?",
		"On average, how many spectators attended a {season} match in {month}?"),
	one(easy, `SELECT max(home_goals + away_goals) FROM game WHERE season = {season}`, `SELECT DISTINCT season FROM game`,
		"What is the largest number of goals scored in a single game of the {season} season?"),
	top(easy, 1, "name", "FROM player WHERE position = {position} AND nationality = {nat}", "market_value DESC",
		`SELECT DISTINCT position, nationality AS nat, lower(position) AS role FROM player`,
		"Who is the most valuable {nat} {role} by market value?",
		"Which {role} of {nat} nationality has the highest market value?"),
	many(easy, `SELECT name FROM player WHERE position = {position} AND strftime('%Y', birth_date) = {year} ORDER BY name`,
		`SELECT position, strftime('%Y', birth_date) AS year, lower(position) || 's' AS roles FROM player GROUP BY 1, 2 HAVING count(*) BETWEEN 2 AND 12`,
		"Which {roles} were born in {year}?",
		"List the {roles} born in {year}."),
	one(easy, `SELECT count(*) FROM stadium WHERE capacity > {n}`, `SELECT 20000 AS n UNION SELECT 30000 UNION SELECT 40000 UNION SELECT 50000`,
		"How many stadiums hold more than {n} spectators?",
		"Count the stadiums with a capacity above {n}."),
	one(easy, `SELECT count(*) FROM goal WHERE is_penalty = 1 AND minute > {minute}`, `SELECT 45 AS minute UNION SELECT 75 UNION SELECT 89`,
		"How many penalty goals were scored after minute {minute}?"),
	one(easy, `SELECT round(avg(market_value), 2) FROM player WHERE position = {position}`, `SELECT DISTINCT position, lower(position) AS role FROM player`,
		"What is the average market value of a {role}, in millions?"),

	// Medium: two tables.
	one(medium, `SELECT count(*) FROM player AS p JOIN team AS t ON p.team_id = t.team_id WHERE t.name = {team} AND p.position = {position}`,
		`SELECT DISTINCT t.name AS team, p.position, lower(p.position) || 's' AS roles FROM player AS p JOIN team AS t ON p.team_id = t.team_id`,
		"How many {roles} does {team} have?",
		"Count the {roles} in the {team} squad."),
	many(medium, `SELECT p.name FROM player AS p JOIN team AS t ON p.team_id = t.team_id WHERE t.name = {team} AND p.position = {position} ORDER BY p.name`,
		`SELECT DISTINCT t.name AS team, p.position, lower(p.position) AS role FROM player AS p JOIN team AS t ON p.team_id = t.team_id`,
		"List the players of {team} whose position is {position}.",
		"Who plays as {role} for {team}?"),
	one(medium, `SELECT sum(g.home_goals) FROM game AS g JOIN team AS t ON g.home_team_id = t.team_id WHERE t.name = {team} AND g.season = {season}`,
		`SELECT name AS team, season FROM team, (SELECT DISTINCT season FROM game)`,
		"How many goals did {team} score in home games in the {season} season?",
		"In {season}, how many goals did {team} score at home?"),
	one(medium, `SELECT s.name FROM stadium AS s JOIN team AS t ON t.stadium_id = s.stadium_id WHERE t.name = {team}`,
		`SELECT name AS team FROM team`,
		"What is the name of the home stadium of {team}?",
		"Where does {team} play its home games?"),
	top(medium, 1, "t.name", "FROM team AS t JOIN game AS g ON g.home_team_id = t.team_id WHERE g.season = {season} GROUP BY t.team_id", "avg(g.attendance) DESC",
		`SELECT DISTINCT season FROM game`,
		"Which team had the highest average home attendance in the {season} season?",
		"In {season}, which club drew the largest average crowd at home?"),
	top(medium, 1, "p.name", "FROM player AS p JOIN goal AS gl ON gl.player_id = p.player_id WHERE p.position = {position} GROUP BY p.player_id", "count(*) DESC",
		`SELECT DISTINCT position, lower(position) AS role FROM player WHERE position <> 'Goalkeeper'`,
		"Which {role} has scored the most goals over both seasons?",
		"Name the {role} with the most goals in the database."),
	one(medium, `SELECT round(sum(p.market_value), 1) FROM player AS p JOIN team AS t ON p.team_id = t.team_id WHERE t.name = {team}`,
		`SELECT name AS team FROM team`,
		"What is the total market value of the {team} squad, in millions?",
		"How much is the whole {team} squad worth in total market value?"),
	one(medium, `SELECT g.home_goals, g.away_goals FROM game AS g JOIN team AS h ON g.home_team_id = h.team_id JOIN team AS a ON g.away_team_id = a.team_id WHERE h.name = {home} AND a.name = {away} AND g.season = {season}`,
		`SELECT h.name AS home, a.name AS away, g.season FROM game AS g JOIN team AS h ON g.home_team_id = h.team_id JOIN team AS a ON g.away_team_id = a.team_id`,
		"What was the score when {home} hosted {away} in the {season} season? Give home goals and away goals.",
		"In {season}, how did the game of {home} at home against {away} end (home goals, away goals)?"),

	// Hard: three tables or more.
	top(hard, 1, "p.name", "FROM player AS p JOIN team AS t ON p.team_id = t.team_id JOIN goal AS gl ON gl.player_id = p.player_id JOIN game AS g ON gl.game_id = g.game_id WHERE t.name = {team} AND g.season = {season} GROUP BY p.player_id", "count(*) DESC",
		`SELECT name AS team, season FROM team, (SELECT DISTINCT season FROM game)`,
		"Who was the top scorer of {team} in the {season} season?",
		"Which {team} player scored the most goals in {season}?"),
	one(hard, `SELECT count(*) FROM goal AS gl JOIN player AS p ON gl.player_id = p.player_id JOIN game AS g ON gl.game_id = g.game_id WHERE p.nationality = {nat} AND g.season = {season}`,
		`SELECT DISTINCT nationality AS nat, season FROM player, (SELECT DISTINCT season FROM game)`,
		"How many goals did {nat} players score in the {season} season?",
		"Count the goals scored by players of {nat} nationality during {season}."),
	many(hard, `SELECT DISTINCT p.name FROM goal AS gl JOIN player AS p ON gl.player_id = p.player_id JOIN game AS g ON gl.game_id = g.game_id JOIN team AS h ON g.home_team_id = h.team_id JOIN team AS a ON g.away_team_id = a.team_id WHERE h.name = {home} AND a.name = {away} AND g.season = {season} ORDER BY p.name`,
		`SELECT h.name AS home, a.name AS away, g.season FROM game AS g JOIN team AS h ON g.home_team_id = h.team_id JOIN team AS a ON g.away_team_id = a.team_id WHERE g.home_goals + g.away_goals >= 3`,
		"Who scored in the {season} game between {home} (at home) and {away}?",
		"List the goal scorers of the {season} match {home} versus {away}, played at {home}."),
	many(hard, `SELECT p.name FROM player AS p JOIN goal AS gl ON gl.player_id = p.player_id JOIN game AS g ON gl.game_id = g.game_id WHERE g.season = {season} GROUP BY p.player_id HAVING count(*) >= {n} ORDER BY p.name`,
		`SELECT DISTINCT season, n FROM game, (SELECT 8 AS n UNION SELECT 10 UNION SELECT 12)`,
		"Which players scored at least {n} goals in the {season} season?",
		"List the players with {n} or more goals in {season}."),
	top(hard, 1, "s.name", "FROM stadium AS s JOIN team AS t ON t.stadium_id = s.stadium_id JOIN game AS g ON g.home_team_id = t.team_id WHERE g.season = {season} GROUP BY s.stadium_id", "sum(g.home_goals + g.away_goals) DESC",
		`SELECT DISTINCT season FROM game`,
		"In which stadium were the most goals scored during the {season} season?",
		"Which stadium saw the highest number of goals in {season}?"),
}
