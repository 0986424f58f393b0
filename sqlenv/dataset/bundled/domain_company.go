package bundled

import "fmt"

// Company HR: departments, jobs, employees (with their managers), projects,
// project assignments and yearly performance reviews.

var companyDepartments = []struct {
	name, city string
	jobs       []int // indexes into companyJobs (the first is the team lead's)
}{
	{"Engineering", "Oslo", []int{0, 1, 2, 3, 4}},
	{"Data Science", "Oslo", []int{0, 5, 6}},
	{"Product", "Stockholm", []int{0, 7, 8}},
	{"Sales", "Stockholm", []int{0, 9, 10}},
	{"Marketing", "Copenhagen", []int{0, 11, 12}},
	{"Finance", "Helsinki", []int{0, 13, 14}},
	{"Human Resources", "Oslo", []int{0, 15}},
	{"Customer Support", "Berlin", []int{0, 16, 17}},
}

var companyJobs = []struct {
	title    string
	min, max int
}{
	{"Team Lead", 85000, 130000}, {"Software Engineer", 60000, 95000}, {"Senior Software Engineer", 80000, 125000},
	{"DevOps Engineer", 65000, 100000}, {"QA Engineer", 50000, 80000}, {"Data Scientist", 65000, 110000},
	{"Data Engineer", 62000, 100000}, {"Product Manager", 75000, 120000}, {"UX Designer", 55000, 90000},
	{"Sales Representative", 42000, 70000}, {"Account Manager", 55000, 90000}, {"Marketing Specialist", 45000, 75000},
	{"Content Writer", 40000, 65000}, {"Accountant", 48000, 78000}, {"Financial Analyst", 55000, 92000},
	{"HR Specialist", 45000, 72000}, {"Support Agent", 35000, 52000}, {"Support Engineer", 45000, 68000},
	{"Director", 120000, 190000},
}

var (
	companyCities   = []string{"Oslo", "Bergen", "Stockholm", "Copenhagen", "Helsinki", "Berlin"}
	companyProjects = []string{"Aurora", "Borealis", "Cobalt", "Delta", "Ember", "Fjord", "Glacier", "Harbor", "Iris", "Juniper", "Kepler", "Lumen", "Meridian", "Nimbus", "Orion", "Polaris", "Quartz", "Raven", "Summit", "Tundra", "Umbra", "Vega", "Willow", "Zenith"}
	companyRoles    = []string{"Contributor", "Contributor", "Contributor", "Lead", "Reviewer"}
)

func buildCompany(g *gen) []*table {
	dept := g.table(tableSpec{name: "department", rows: len(companyDepartments), columns: []column{
		{"department_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", func(r *row) any { return companyDepartments[r.i].name }},
		{"location_city TEXT NOT NULL", func(r *row) any { return companyDepartments[r.i].city }},
	}})
	job := g.table(tableSpec{name: "job", rows: len(companyJobs), columns: []column{
		{"job_id INTEGER PRIMARY KEY", rowID},
		{"title TEXT NOT NULL", func(r *row) any { return companyJobs[r.i].title }},
		{"min_salary INTEGER NOT NULL", func(r *row) any { return companyJobs[r.i].min }},
		{"max_salary INTEGER NOT NULL", func(r *row) any { return companyJobs[r.i].max }},
	}})
	employee := companyStaff(g)
	project := g.table(tableSpec{name: "project", rows: len(companyProjects), columns: []column{
		{"project_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", func(r *row) any { return "Project " + companyProjects[r.i] }},
		{"department_id INTEGER NOT NULL", refSkewed(dept)},
		{"start_date TEXT NOT NULL", dateBetween("2019-01-01", "2024-03-31")},
		{"budget REAL NOT NULL", func(r *row) any { return float64(5000 * r.g.between(10, 300)) }},
	}, constraints: []string{
		"FOREIGN KEY (department_id) REFERENCES department (department_id)",
	}})
	return []*table{dept, job, employee, project, companyAssignments(g, employee, project), companyReviews(g, employee)}
}

// companyStaff makes the employees: a CEO, a director per department
// reporting to the CEO, team leads reporting to their director, and staff
// reporting to a team lead of their department.
func companyStaff(g *gen) *table {
	employee := newTable("employee", `
employee_id INTEGER PRIMARY KEY,
name TEXT NOT NULL,
email TEXT NOT NULL,
department_id INTEGER NOT NULL,
job_id INTEGER NOT NULL,
manager_id INTEGER,
hire_date TEXT NOT NULL,
salary REAL NOT NULL,
city TEXT NOT NULL,
FOREIGN KEY (department_id) REFERENCES department (department_id),
FOREIGN KEY (job_id) REFERENCES job (job_id),
FOREIGN KEY (manager_id) REFERENCES employee (employee_id)`)
	names := g.people(520)
	add := func(dept, jobIdx int, manager any, city string) int {
		id := employee.len() + 1
		j := companyJobs[jobIdx]
		employee.add(id, names[id-1], email(names[id-1], "nordlys.com", 0), dept, jobIdx+1, manager,
			g.date("2010-01-01", "2024-03-31"), float64(100*((j.min+g.intn(j.max-j.min))/100)), city)
		return id
	}
	ceo := add(1, len(companyJobs)-1, nil, "Oslo")
	leads := map[int][]int{}
	for d, dd := range companyDepartments {
		dir := add(d+1, len(companyJobs)-1, ceo, dd.city)
		for range 2 + g.intn(3) {
			leads[d] = append(leads[d], add(d+1, 0, dir, dd.city))
		}
	}
	for employee.len() < len(names) {
		d := g.skewed(len(companyDepartments))
		dd := companyDepartments[d]
		city := dd.city
		if g.chance(0.35) {
			city = g.pick(companyCities)
		}
		add(d+1, dd.jobs[1+g.intn(len(dd.jobs)-1)], leads[d][g.intn(len(leads[d]))], city)
	}
	return employee
}

// companyAssignments puts employees (not the CEO) on projects, each pair
// once.
func companyAssignments(g *gen, employee, project *table) *table {
	assignment := newTable("assignment", `
employee_id INTEGER NOT NULL,
project_id INTEGER NOT NULL,
role TEXT NOT NULL,
hours_per_week INTEGER NOT NULL,
PRIMARY KEY (employee_id, project_id),
FOREIGN KEY (employee_id) REFERENCES employee (employee_id),
FOREIGN KEY (project_id) REFERENCES project (project_id)`)
	seen := map[[2]int]bool{}
	for assignment.len() < 1000 {
		e, p := 2+g.intn(employee.len()-1), 1+g.skewed(project.len())
		if !seen[[2]int{e, p}] {
			seen[[2]int{e, p}] = true
			assignment.add(e, p, g.pick(companyRoles), 4*g.between(1, 8))
		}
	}
	return assignment
}

// companyReviews rates each employee once a year from 2020 to 2023, in the
// years after their hiring.
func companyReviews(g *gen, employee *table) *table {
	review := newTable("performance_review", `
review_id INTEGER PRIMARY KEY,
employee_id INTEGER NOT NULL,
review_year INTEGER NOT NULL,
rating INTEGER NOT NULL,
FOREIGN KEY (employee_id) REFERENCES employee (employee_id)`)
	for e := 1; e <= employee.len(); e++ {
		hired := employee.rows[e-1][6].(string)
		for y := 2020; y <= 2023; y++ {
			if hired < fmt.Sprintf("%d-01-01", y) {
				review.add(review.len()+1, e, y, 1+g.between(0, 2)+g.between(0, 2))
			}
		}
	}
	return review
}

var companyTemplates = []tmpl{
	// Easy: one table (a self-join reads one table too).
	one(easy, `SELECT count(*) FROM employee WHERE city = {city} AND strftime('%Y', hire_date) = {year}`,
		`SELECT DISTINCT city, strftime('%Y', hire_date) AS year FROM employee`,
		"How many employees based in {city} were hired in {year}?",
		"Count the {city} employees whose hire date falls in {year}."),
	one(easy, `SELECT round(avg(salary), 2) FROM employee WHERE city = {city}`, `SELECT DISTINCT city FROM employee`,
		"What is the average salary of the employees based in {city}?",
		"On average, how much do employees working in {city} earn?"),
	top(easy, 1, "name", "FROM employee WHERE city = {city}", "salary DESC", `SELECT DISTINCT city FROM employee`,
		"Who is the best-paid employee in {city}?",
		"Which employee based in {city} has the highest salary?"),
	many(easy, `SELECT name FROM project WHERE strftime('%Y', start_date) = {year} ORDER BY name`,
		`SELECT DISTINCT strftime('%Y', start_date) AS year FROM project`,
		"Which projects started in {year}?",
		"List the projects whose start date is in {year}."),
	one(easy, `SELECT min_salary FROM job WHERE title = {title}`, `SELECT title FROM job`,
		"What is the minimum salary for the job {title}?",
		"What is the lower end of the salary band for the job {title}?"),
	one(easy, `SELECT count(*) FROM performance_review WHERE review_year = {year} AND rating = {rating}`,
		`SELECT DISTINCT review_year AS year, rating FROM performance_review`,
		"How many performance reviews in {year} gave a rating of {rating}?",
		"Count the {year} reviews with the rating {rating}."),
	one(easy, `SELECT round(avg(rating), 2) FROM performance_review WHERE review_year = {year}`, `SELECT DISTINCT review_year AS year FROM performance_review`,
		"What was the average performance rating in {year}?",
		"On average, how were employees rated in the {year} reviews?"),
	many(easy, `SELECT e.name FROM employee AS e JOIN employee AS m ON e.manager_id = m.employee_id WHERE m.name = {name} ORDER BY e.name`,
		`SELECT m.name FROM employee AS e JOIN employee AS m ON e.manager_id = m.employee_id GROUP BY m.employee_id HAVING count(*) BETWEEN 2 AND 20`,
		"Who reports directly to {name}?",
		"List the employees whose manager is {name}."),
	many(easy, `SELECT city, count(*) FROM employee WHERE strftime('%Y', hire_date) = {year} GROUP BY city ORDER BY city`,
		`SELECT DISTINCT strftime('%Y', hire_date) AS year FROM employee`,
		"In which cities were employees hired in {year}, and how many in each?",
		"Break down the {year} hires by city, with a count per city."),
	one(easy, `SELECT name FROM employee WHERE manager_id IS NULL`, "",
		"Who is at the top of the company hierarchy, the one employee without a manager?"),

	// Medium: two tables.
	one(medium, `SELECT round(avg(e.salary), 2) FROM employee AS e JOIN job AS j ON e.job_id = j.job_id WHERE j.title = {title} AND e.city = {city}`,
		`SELECT j.title, e.city FROM employee AS e JOIN job AS j ON e.job_id = j.job_id GROUP BY 1, 2 HAVING count(*) >= 2`,
		"What is the average salary of the employees working as {title} in {city}?",
		"On average, how much do employees with the job title {title} earn in {city}?"),
	one(medium, `SELECT count(*) FROM employee AS e JOIN department AS d ON e.department_id = d.department_id WHERE d.name = {dept}`,
		`SELECT name AS dept FROM department`,
		"How many employees does the {dept} department have?",
		"What is the headcount of {dept}?"),
	top(medium, 1, "e.name", "FROM employee AS e JOIN department AS d ON e.department_id = d.department_id WHERE d.name = {dept} AND e.job_id <> 19", "e.salary DESC",
		`SELECT name AS dept FROM department`,
		"Apart from its director, who is the best-paid employee of {dept}?",
		"Excluding directors, which {dept} employee earns the most?"),
	many(medium, `SELECT p.name FROM project AS p JOIN department AS d ON p.department_id = d.department_id WHERE d.name = {dept} ORDER BY p.name`,
		`SELECT d.name AS dept FROM project AS p JOIN department AS d ON p.department_id = d.department_id GROUP BY 1 HAVING count(*) >= 2`,
		"Which projects does the {dept} department run?",
		"List the projects owned by {dept}."),
	one(medium, `SELECT sum(a.hours_per_week) FROM assignment AS a JOIN employee AS e ON a.employee_id = e.employee_id WHERE e.name = {name}`,
		`SELECT e.name FROM employee AS e JOIN assignment AS a ON a.employee_id = e.employee_id`,
		"How many hours per week does {name} spend on projects in total?",
		"Summed over all of their project assignments, how many weekly hours does {name} work on projects?"),
	one(medium, `SELECT j.title FROM job AS j JOIN employee AS e ON e.job_id = j.job_id WHERE e.name = {name}`,
		`SELECT name FROM employee`,
		"What is the job title of {name}?",
		"Which job does {name} hold?"),
	one(medium, `SELECT count(*) FROM employee AS e JOIN job AS j ON e.job_id = j.job_id WHERE j.title = {title}`,
		`SELECT title FROM job`,
		"How many people does the company employ as {title}?",
		"Count the employees whose job title is {title}."),
	many(medium, `SELECT d.name, count(*) FROM department AS d JOIN project AS p ON p.department_id = d.department_id WHERE p.start_date >= {day} GROUP BY d.name ORDER BY d.name`,
		`SELECT DISTINCT strftime('%Y', start_date) || '-01-01' AS day, strftime('%Y', start_date) AS year FROM project`,
		"Which departments have projects that started in {year} or later, and how many such projects each?",
		"Give every department with projects started since {day}, and how many such projects it has."),

	// Hard: three tables or more.
	many(hard, `SELECT e.name FROM employee AS e JOIN assignment AS a ON a.employee_id = e.employee_id JOIN project AS p ON a.project_id = p.project_id WHERE p.name = {project} AND a.role = {role} ORDER BY e.name`,
		`SELECT p.name AS project, a.role FROM project AS p JOIN assignment AS a ON a.project_id = p.project_id GROUP BY 1, 2 HAVING count(*) BETWEEN 2 AND 20`,
		"Which employees work on {project} in the role {role}?",
		"List the {project} team members whose project role is {role}."),
	top(hard, 1, "d.name", "FROM department AS d JOIN project AS p ON p.department_id = d.department_id JOIN assignment AS a ON a.project_id = p.project_id WHERE a.role = {role} GROUP BY d.department_id", "sum(a.hours_per_week) DESC",
		`SELECT DISTINCT role FROM assignment`,
		"Which department's projects receive the most weekly hours from people in the role {role}?",
		"Counting only assignments with the role {role}, which department's projects get the most hours per week?"),
	one(hard, `SELECT round(avg(r.rating), 2) FROM performance_review AS r JOIN employee AS e ON r.employee_id = e.employee_id JOIN department AS d ON e.department_id = d.department_id WHERE d.name = {dept} AND r.review_year = {year}`,
		`SELECT name AS dept, year FROM department, (SELECT DISTINCT review_year AS year FROM performance_review)`,
		"What was the average performance rating in the {dept} department in {year}?",
		"How were {dept} employees rated on average in their {year} reviews?"),
	many(hard, `SELECT e.name FROM employee AS e JOIN assignment AS a ON a.employee_id = e.employee_id JOIN department AS d ON e.department_id = d.department_id WHERE d.name = {dept} GROUP BY e.employee_id HAVING count(*) >= {n} ORDER BY e.name`,
		`SELECT name AS dept, n FROM department, (SELECT 3 AS n UNION SELECT 4 UNION SELECT 5)`,
		"Which {dept} employees are assigned to at least {n} projects?",
		"List the employees of {dept} who work on {n} or more projects."),
	one(hard, `SELECT round(avg(e.salary), 2) FROM employee AS e JOIN assignment AS a ON a.employee_id = e.employee_id JOIN project AS p ON a.project_id = p.project_id WHERE p.name = {project}`,
		`SELECT name AS project FROM project`,
		"What is the average salary of the people assigned to {project}?",
		"On average, how much do the members of {project} earn?"),
}
