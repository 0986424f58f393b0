package bundled

import (
	"fmt"
	"slices"
)

// University: departments, instructors, courses, students and enrollments.

var universityDepartments = []struct {
	name, code, building string
	courses              []string
}{
	{"Computer Science", "CS", "Turing Hall", []string{"Introduction to Programming", "Data Structures", "Algorithms", "Operating Systems", "Databases", "Computer Networks", "Machine Learning", "Compilers"}},
	{"Mathematics", "MATH", "Euler Building", []string{"Calculus I", "Calculus II", "Linear Algebra", "Probability", "Real Analysis", "Abstract Algebra", "Number Theory", "Topology"}},
	{"Physics", "PHYS", "Curie Hall", []string{"Classical Mechanics", "Electromagnetism", "Quantum Mechanics", "Thermodynamics", "Optics", "Astrophysics", "Solid State Physics", "Relativity"}},
	{"Chemistry", "CHEM", "Curie Hall", []string{"General Chemistry", "Organic Chemistry", "Inorganic Chemistry", "Physical Chemistry", "Biochemistry", "Analytical Chemistry", "Polymer Science", "Spectroscopy"}},
	{"Biology", "BIO", "Darwin Center", []string{"Cell Biology", "Genetics", "Ecology", "Microbiology", "Evolution", "Neuroscience", "Botany", "Marine Biology"}},
	{"History", "HIST", "Humboldt Hall", []string{"Ancient Civilizations", "Medieval Europe", "Modern World History", "History of Science", "Economic History", "Colonial Empires", "Cold War Studies", "Oral History"}},
	{"Economics", "ECON", "Smith Building", []string{"Microeconomics", "Macroeconomics", "Econometrics", "Game Theory", "Labor Economics", "Public Finance", "International Trade", "Development Economics"}},
	{"Philosophy", "PHIL", "Humboldt Hall", []string{"Logic", "Ethics", "Epistemology", "Philosophy of Mind", "Political Philosophy", "Aesthetics", "Philosophy of Language", "Metaphysics"}},
	{"Linguistics", "LING", "Humboldt Hall", []string{"Phonetics", "Syntax", "Semantics", "Sociolinguistics", "Historical Linguistics", "Psycholinguistics", "Morphology", "Field Methods"}},
	{"Mechanical Engineering", "ME", "Watt Building", []string{"Statics", "Dynamics", "Fluid Mechanics", "Heat Transfer", "Machine Design", "Materials Science", "Control Systems", "Robotics"}},
}

var (
	universityRanks     = []string{"Lecturer", "Assistant Professor", "Associate Professor", "Professor"}
	universitySemesters = []string{"Fall 2021", "Spring 2022", "Fall 2022", "Spring 2023", "Fall 2023", "Spring 2024"}
	universityGrades    = []string{"A", "A", "B", "B", "B", "C", "C", "D", "F"}
)

func buildUniversity(g *gen) []*table {
	dept := newTable("department", `
department_id INTEGER PRIMARY KEY,
name TEXT NOT NULL,
building TEXT NOT NULL,
budget REAL NOT NULL`)
	course := newTable("course", `
course_id INTEGER PRIMARY KEY,
code TEXT NOT NULL UNIQUE,
title TEXT NOT NULL,
department_id INTEGER NOT NULL,
credits INTEGER NOT NULL,
level INTEGER NOT NULL,
FOREIGN KEY (department_id) REFERENCES department (department_id)`)
	for i, d := range universityDepartments {
		dept.add(i+1, d.name, d.building, float64(g.between(40, 160))*10000)
		for j, title := range d.courses {
			level := 100 * (1 + j/2)
			course.add(course.len()+1, fmt.Sprintf("%s%d", d.code, level+10*(j%2)+1), title, i+1, g.between(2, 6), level)
		}
	}
	instructors := g.people(64)
	instructor := g.table(tableSpec{name: "instructor", rows: len(instructors), columns: []column{
		{"instructor_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", each(instructors)},
		{"department_id INTEGER NOT NULL", refEachThenSkewed(dept)},
		{"rank TEXT NOT NULL", oneOf(universityRanks...)},
		{"salary REAL NOT NULL", func(r *row) any { // higher at higher ranks
			return float64(52000 + slices.Index(universityRanks, r.str("rank"))*14000 + r.g.between(0, 90)*100)
		}},
		{"hire_year INTEGER NOT NULL", between(1994, 2023)},
	}, constraints: []string{
		"FOREIGN KEY (department_id) REFERENCES department (department_id)",
	}})
	homes := cityNames(24)
	student := g.table(tableSpec{name: "student", rows: 900, columns: []column{
		{"student_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", person},
		{"email TEXT NOT NULL", func(r *row) any { return email(r.str("name"), "uni.edu", r.i+1) }},
		{"major_department_id INTEGER NOT NULL", refSkewed(dept)},
		{"enrollment_year INTEGER NOT NULL", between(2018, 2023)},
		{"home_city TEXT NOT NULL", skewedOneOf(homes)},
		{"gpa REAL NOT NULL", realBetween(2.0, 4.0, 2)},
	}, constraints: []string{
		"FOREIGN KEY (major_department_id) REFERENCES department (department_id)",
	}})
	return []*table{dept, instructor, course, student, universityEnrollments(g, course, instructor, student)}
}

// universityEnrollments enrolls students in courses, each taught by an
// instructor of the course's department; popular courses fill up first.
func universityEnrollments(g *gen, course, instructor, student *table) *table {
	enrollment := newTable("enrollment", `
enrollment_id INTEGER PRIMARY KEY,
student_id INTEGER NOT NULL,
course_id INTEGER NOT NULL,
instructor_id INTEGER NOT NULL,
semester TEXT NOT NULL,
grade TEXT NOT NULL,
FOREIGN KEY (student_id) REFERENCES student (student_id),
FOREIGN KEY (course_id) REFERENCES course (course_id),
FOREIGN KEY (instructor_id) REFERENCES instructor (instructor_id)`)
	byDept := map[int][]int{} // instructor ids by department
	for i, in := range instructor.rows {
		d := in[2].(int)
		byDept[d] = append(byDept[d], i+1)
	}
	taken := map[[2]int]bool{}
	for enrollment.len() < 4000 {
		s, c := 1+g.intn(student.len()), 1+g.skewed(course.len())
		if taken[[2]int{s, c}] {
			continue
		}
		taken[[2]int{s, c}] = true
		d := course.rows[c-1][3].(int)
		teachers := byDept[d]
		enrollment.add(enrollment.len()+1, s, c, teachers[g.intn(len(teachers))], g.pick(universitySemesters), g.pick(universityGrades))
	}
	return enrollment
}

var universityTemplates = []tmpl{
	// Easy: one table.
	one(easy, `SELECT count(*) FROM student WHERE home_city = {city}`, `SELECT DISTINCT home_city AS city FROM student`,
		"How many students come from {city}?",
		"Count the students whose home city is {city}.",
		"What is the number of students from {city}?"),
	one(easy, `SELECT count(*) FROM student WHERE enrollment_year = {year}`, `SELECT DISTINCT enrollment_year AS year FROM student`,
		"How many students enrolled in {year}?",
		"How many students started at the university in {year}?"),
	one(easy, `SELECT round(avg(gpa), 2) FROM student WHERE enrollment_year = {year} AND home_city = {city}`,
		`SELECT enrollment_year AS year, home_city AS city FROM student GROUP BY 1, 2 HAVING count(*) >= 5`,
		"What is the average GPA of students from {city} who enrolled in {year}?",
		"Among the students who enrolled in {year} and come from {city}, what is the average GPA?"),
	one(easy, `SELECT max(salary) FROM instructor WHERE rank = {rank}`, `SELECT DISTINCT rank FROM instructor`,
		"What is the highest salary among instructors with the rank {rank}?",
		"How much does the best-paid {rank} earn?"),
	one(easy, `SELECT min(hire_year) FROM instructor WHERE rank = {rank}`, `SELECT DISTINCT rank FROM instructor`,
		"In which year was the longest-serving {rank} hired?",
		"What is the earliest hire year of any instructor whose rank is {rank}?"),
	many(easy, `SELECT title FROM course WHERE level = {level} AND credits = {credits} ORDER BY title`,
		`SELECT DISTINCT level, credits FROM course`,
		"List the titles of all {level}-level courses worth {credits} credits.",
		"Which courses are at level {level} and carry {credits} credits?"),
	many(easy, `SELECT name FROM instructor WHERE hire_year = {year} ORDER BY name`, `SELECT DISTINCT hire_year AS year FROM instructor`,
		"Which instructors were hired in {year}?",
		"Give the names of the instructors hired in {year}."),
	top(easy, 1, "name", "FROM student WHERE home_city = {city}", "gpa DESC", `SELECT DISTINCT home_city AS city FROM student`,
		"Which student from {city} has the highest GPA?",
		"Who is the top student by GPA among those from {city}?"),
	one(easy, `SELECT count(DISTINCT home_city) FROM student`, "",
		"How many different home cities do the students come from?"),
	one(easy, `SELECT sum(credits) FROM course WHERE level = {level}`, `SELECT DISTINCT level FROM course`,
		"What is the total number of credits of all {level}-level courses?"),

	// Medium: two tables.
	one(medium, `SELECT count(*) FROM student AS s JOIN department AS d ON s.major_department_id = d.department_id WHERE d.name = {dept}`,
		`SELECT name AS dept FROM department`,
		"How many students major in {dept}?",
		"What is the number of students whose major is {dept}?"),
	many(medium, `SELECT c.title FROM course AS c JOIN department AS d ON c.department_id = d.department_id WHERE d.name = {dept} AND c.level >= {level} ORDER BY c.title`,
		`SELECT name AS dept, 300 AS level FROM department UNION SELECT name, 200 FROM department`,
		"List the titles of the {dept} courses at level {level} or above.",
		"Which courses of the {dept} department have a level of at least {level}?"),
	one(medium, `SELECT round(avg(i.salary), 2) FROM instructor AS i JOIN department AS d ON i.department_id = d.department_id WHERE d.name = {dept}`,
		`SELECT name AS dept FROM department`,
		"What is the average salary of the instructors in the {dept} department?",
		"On average, how much are {dept} instructors paid?"),
	top(medium, 1, "d.name", "FROM department AS d JOIN instructor AS i ON i.department_id = d.department_id WHERE i.rank = {rank} GROUP BY d.department_id", "count(*) DESC",
		`SELECT DISTINCT rank FROM instructor`,
		"Which department has the most instructors with the rank {rank}?",
		"Name the department employing the largest number of instructors ranked {rank}."),
	many(medium, `SELECT d.name, count(*) FROM student AS s JOIN department AS d ON s.major_department_id = d.department_id WHERE s.home_city = {city} GROUP BY d.name ORDER BY d.name`,
		`SELECT DISTINCT home_city AS city FROM student`,
		"Which major departments do the students from {city} belong to, and how many students each?",
		"Break down the students from {city} by major department: name and number of students."),
	one(medium, `SELECT count(*) FROM enrollment AS e JOIN course AS c ON e.course_id = c.course_id WHERE c.title = {title} AND e.grade = {grade}`,
		`SELECT title, grade FROM course, (SELECT 'A' AS grade UNION SELECT 'F')`,
		"How many {grade} grades were given in {title}?",
		"Count the enrollments in {title} that received the grade {grade}."),
	one(medium, `SELECT d.name FROM instructor AS i JOIN department AS d ON i.department_id = d.department_id WHERE i.name = {name}`,
		`SELECT name FROM instructor`,
		"Which department does {name} teach in?",
		"In which department does the instructor {name} work?"),
	top(medium, 3, "c.title", "FROM course AS c JOIN enrollment AS e ON e.course_id = c.course_id WHERE e.semester = {semester} GROUP BY c.course_id", "count(*) DESC",
		`SELECT DISTINCT semester FROM enrollment`,
		"What were the three most popular courses in {semester} by number of enrollments?",
		"List the 3 courses with the most enrollments in {semester}."),

	// Hard: three tables or more.
	many(hard, `SELECT s.name FROM student AS s JOIN enrollment AS e ON e.student_id = s.student_id JOIN course AS c ON e.course_id = c.course_id WHERE c.title = {title} AND e.semester = {semester} ORDER BY s.name`,
		`SELECT c.title, e.semester FROM course AS c JOIN enrollment AS e ON e.course_id = c.course_id GROUP BY 1, 2 HAVING count(*) BETWEEN 2 AND 20`,
		"List the students who took {title} in {semester}.",
		"Which students were enrolled in {title} during {semester}?"),
	top(hard, 1, "i.name", "FROM instructor AS i JOIN enrollment AS e ON e.instructor_id = i.instructor_id JOIN department AS d ON i.department_id = d.department_id WHERE d.name = {dept} GROUP BY i.instructor_id", "count(*) DESC",
		`SELECT name AS dept FROM department`,
		"Which {dept} instructor has taught the most enrollments?",
		"In the {dept} department, who is the instructor with the largest number of enrolled students?"),
	one(hard, `SELECT round(avg(gpa), 2) FROM student WHERE student_id IN (SELECT e.student_id FROM enrollment AS e JOIN instructor AS i ON e.instructor_id = i.instructor_id WHERE i.name = {name})`,
		`SELECT name FROM instructor`,
		"What is the average GPA of the students who have been taught by {name}?",
		"Considering every student who took a class with {name}, what is their average GPA?"),
	many(hard, `SELECT d.name, count(*) FROM department AS d JOIN course AS c ON c.department_id = d.department_id JOIN enrollment AS e ON e.course_id = c.course_id WHERE e.semester = {semester} AND e.grade = 'A' GROUP BY d.name ORDER BY d.name`,
		`SELECT DISTINCT semester FROM enrollment`,
		"Which departments awarded A grades in {semester}, and how many did each award?",
		"List the departments whose courses gave A grades in {semester}, with the number of A grades."),
	many(hard, `SELECT d.name FROM department AS d JOIN course AS c ON c.department_id = d.department_id JOIN enrollment AS e ON e.course_id = c.course_id WHERE e.semester = {semester} GROUP BY d.department_id HAVING count(*) > {n} ORDER BY d.name`,
		`SELECT DISTINCT semester, 50 AS n FROM enrollment UNION SELECT DISTINCT semester, 100 FROM enrollment`,
		"Which departments had more than {n} course enrollments in {semester}?",
		"Name the departments whose courses counted over {n} enrollments in {semester}."),
}
