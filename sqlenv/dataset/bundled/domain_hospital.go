package bundled

import "slices"

// Hospital: departments, doctors, patients, admissions, medications and
// prescriptions.

var hospitalDepartments = []struct {
	name      string
	floor     int
	diagnoses []string
}{
	{"Cardiology", 3, []string{"Atrial Fibrillation", "Heart Failure", "Angina", "Myocardial Infarction"}},
	{"Neurology", 5, []string{"Migraine", "Epilepsy", "Stroke", "Multiple Sclerosis"}},
	{"Oncology", 6, []string{"Lung Cancer", "Breast Cancer", "Lymphoma", "Colon Cancer"}},
	{"Pediatrics", 2, []string{"Bronchiolitis", "Otitis Media", "Croup", "Dehydration"}},
	{"Orthopedics", 4, []string{"Hip Fracture", "Knee Replacement", "Ankle Fracture", "Spinal Stenosis"}},
	{"Emergency Medicine", 1, []string{"Concussion", "Food Poisoning", "Severe Burns", "Allergic Reaction"}},
	{"Gastroenterology", 4, []string{"Appendicitis", "Pancreatitis", "Crohn Disease", "Gallstones"}},
	{"Pulmonology", 3, []string{"Pneumonia", "Asthma Attack", "COPD Exacerbation", "Pulmonary Embolism"}},
	{"Nephrology", 5, []string{"Kidney Stones", "Acute Kidney Injury", "Chronic Kidney Disease", "Nephritis"}},
	{"Psychiatry", 7, []string{"Major Depression", "Bipolar Disorder", "Anxiety Disorder", "Psychosis"}},
}

var hospitalMedications = []struct{ name, category string }{
	{"Amoxicillin", "Antibiotic"}, {"Ceftriaxone", "Antibiotic"}, {"Azithromycin", "Antibiotic"}, {"Doxycycline", "Antibiotic"}, {"Vancomycin", "Antibiotic"},
	{"Ibuprofen", "Analgesic"}, {"Paracetamol", "Analgesic"}, {"Morphine", "Analgesic"}, {"Tramadol", "Analgesic"}, {"Naproxen", "Analgesic"},
	{"Metoprolol", "Cardiovascular"}, {"Amlodipine", "Cardiovascular"}, {"Warfarin", "Cardiovascular"}, {"Atorvastatin", "Cardiovascular"}, {"Furosemide", "Cardiovascular"}, {"Lisinopril", "Cardiovascular"},
	{"Sertraline", "Psychiatric"}, {"Lithium", "Psychiatric"}, {"Quetiapine", "Psychiatric"}, {"Diazepam", "Psychiatric"},
	{"Levetiracetam", "Neurological"}, {"Sumatriptan", "Neurological"}, {"Gabapentin", "Neurological"}, {"Valproate", "Neurological"},
	{"Omeprazole", "Gastrointestinal"}, {"Ondansetron", "Gastrointestinal"}, {"Loperamide", "Gastrointestinal"}, {"Pantoprazole", "Gastrointestinal"},
	{"Salbutamol", "Respiratory"}, {"Prednisolone", "Respiratory"}, {"Budesonide", "Respiratory"}, {"Montelukast", "Respiratory"},
	{"Heparin", "Anticoagulant"}, {"Enoxaparin", "Anticoagulant"}, {"Apixaban", "Anticoagulant"},
	{"Cisplatin", "Chemotherapy"}, {"Paclitaxel", "Chemotherapy"}, {"Doxorubicin", "Chemotherapy"},
}

var (
	hospitalLevels    = []string{"Resident", "Attending", "Consultant"}
	hospitalBlood     = []string{"O+", "A+", "B+", "O-", "A-", "AB+", "B-", "AB-"}
	hospitalInsurance = []string{"Public Health", "MediCare Plus", "Allianz Care", "Cigna Global", "Aetna", "BlueShield", "Vitality Health"}
)

func buildHospital(g *gen) []*table {
	dept := g.table(tableSpec{name: "department", rows: len(hospitalDepartments), columns: []column{
		{"department_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", func(r *row) any { return hospitalDepartments[r.i].name }},
		{"floor INTEGER NOT NULL", func(r *row) any { return hospitalDepartments[r.i].floor }},
	}})
	doctors := g.people(90)
	doctor := g.table(tableSpec{name: "doctor", rows: len(doctors), columns: []column{
		{"doctor_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", func(r *row) any { return "Dr. " + doctors[r.i] }},
		{"department_id INTEGER NOT NULL", refEachThenSkewed(dept)},
		{"level TEXT NOT NULL", oneOf(hospitalLevels...)},
		{"years_experience INTEGER NOT NULL", func(r *row) any { // more at higher levels
			return 1 + slices.Index(hospitalLevels, r.str("level"))*6 + r.g.intn(8)
		}},
	}, constraints: []string{
		"FOREIGN KEY (department_id) REFERENCES department (department_id)",
	}})
	homes := cityNames(16)
	patients := g.people(1500)
	patient := g.table(tableSpec{name: "patient", rows: len(patients), columns: []column{
		{"patient_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", each(patients)},
		{"sex TEXT NOT NULL", oneOf("F", "M")},
		{"birth_date TEXT NOT NULL", dateBetween("1935-01-01", "2021-12-31")},
		{"city TEXT NOT NULL", skewedOneOf(homes)},
		{"blood_type TEXT NOT NULL", skewedOneOf(hospitalBlood)},
		{"insurance_provider TEXT NOT NULL", skewedOneOf(hospitalInsurance)},
	}})
	med := g.table(tableSpec{name: "medication", rows: len(hospitalMedications), columns: []column{
		{"medication_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", func(r *row) any { return hospitalMedications[r.i].name }},
		{"category TEXT NOT NULL", func(r *row) any { return hospitalMedications[r.i].category }},
		{"unit_price REAL NOT NULL", moneyBetween(0.2, 95)},
	}})
	admission, prescription := hospitalStays(g, doctor, patient, med)
	return []*table{dept, doctor, patient, med, admission, prescription}
}

// hospitalStays makes the admissions (a doctor and a diagnosis of one
// department) and their prescriptions.
func hospitalStays(g *gen, doctor, patient, med *table) (*table, *table) {
	admission := newTable("admission", `
admission_id INTEGER PRIMARY KEY,
patient_id INTEGER NOT NULL,
doctor_id INTEGER NOT NULL,
admission_date TEXT NOT NULL,
discharge_date TEXT NOT NULL,
diagnosis TEXT NOT NULL,
room_number INTEGER NOT NULL,
total_cost REAL NOT NULL,
FOREIGN KEY (patient_id) REFERENCES patient (patient_id),
FOREIGN KEY (doctor_id) REFERENCES doctor (doctor_id)`)
	prescription := newTable("prescription", `
prescription_id INTEGER PRIMARY KEY,
admission_id INTEGER NOT NULL,
medication_id INTEGER NOT NULL,
dosage_mg INTEGER NOT NULL,
days INTEGER NOT NULL,
FOREIGN KEY (admission_id) REFERENCES admission (admission_id),
FOREIGN KEY (medication_id) REFERENCES medication (medication_id)`)
	for i := range 3000 {
		doc := 1 + g.skewed(doctor.len())
		d := hospitalDepartments[doctor.rows[doc-1][2].(int)-1]
		in := g.date("2021-01-01", "2024-06-30")
		stay := 1 + g.skewed(20)
		admission.add(i+1, 1+g.intn(patient.len()), doc, in, addDays(in, stay), g.pickSkewed(d.diagnoses), 100*d.floor+g.between(1, 40), round(g.money(800, 2500)*float64(stay), 2))
		for range g.between(1, 3) {
			prescription.add(prescription.len()+1, i+1, 1+g.skewed(med.len()), 50*g.between(1, 20), g.between(1, 14))
		}
	}
	return admission, prescription
}

var hospitalTemplates = []tmpl{
	// Easy: one table.
	one(easy, `SELECT count(*) FROM patient WHERE city = {city}`, `SELECT DISTINCT city FROM patient`,
		"How many patients live in {city}?",
		"How many of the hospital's patients are from {city}?"),
	one(easy, `SELECT count(*) FROM admission WHERE strftime('%Y', admission_date) = {year}`, `SELECT DISTINCT strftime('%Y', admission_date) AS year FROM admission`,
		"How many hospital admissions were recorded in {year}?",
		"What is the number of admissions recorded in {year}?"),
	one(easy, `SELECT round(avg(julianday(discharge_date) - julianday(admission_date)), 1) FROM admission WHERE diagnosis = {diagnosis}`,
		`SELECT DISTINCT diagnosis FROM admission`,
		"On average, how many days do patients admitted with {diagnosis} stay in hospital?",
		"What is the average length of stay, in days, for {diagnosis} admissions?"),
	one(easy, `SELECT count(*) FROM patient WHERE sex = {sex} AND blood_type = {blood}`,
		`SELECT DISTINCT sex, blood_type AS blood, CASE sex WHEN 'F' THEN 'female' ELSE 'male' END AS sex_word FROM patient`,
		"How many {sex_word} patients have blood type {blood}?",
		"Count the {sex_word} patients whose blood type is {blood}."),
	one(easy, `SELECT max(total_cost) FROM admission WHERE strftime('%Y', admission_date) = {year}`, `SELECT DISTINCT strftime('%Y', admission_date) AS year FROM admission`,
		"What was the highest total cost of a single admission in {year}?",
		"How much did the most expensive admission of {year} cost?"),
	many(easy, `SELECT name FROM medication WHERE category = {category} ORDER BY name`, `SELECT DISTINCT category FROM medication`,
		"List the medications in the {category} category.",
		"Which medications does the hospital classify as {category}?"),
	top(easy, 1, "name", "FROM medication WHERE category = {category}", "unit_price ASC", `SELECT DISTINCT category FROM medication`,
		"What is the cheapest {category} medication per unit?",
		"Which {category} medication has the lowest unit price?"),
	top(easy, 1, "name", "FROM patient WHERE city = {city}", "birth_date ASC", `SELECT DISTINCT city FROM patient`,
		"Who is the oldest patient from {city}?",
		"Name the patient from {city} with the earliest birth date."),
	one(easy, `SELECT count(DISTINCT insurance_provider) FROM patient WHERE city = {city}`, `SELECT DISTINCT city FROM patient`,
		"How many different insurance providers do the patients from {city} use?"),
	many(easy, `SELECT level, count(*) FROM doctor GROUP BY level ORDER BY level`, "",
		"How many doctors are there at each level? Give the level and the count."),

	// Medium: two tables.
	one(medium, `SELECT count(*) FROM doctor AS o JOIN department AS d ON o.department_id = d.department_id WHERE d.name = {dept}`,
		`SELECT name AS dept FROM department`,
		"How many doctors work in {dept}?",
		"What is the number of doctors in the {dept} department?"),
	one(medium, `SELECT count(*) FROM admission AS a JOIN patient AS p ON a.patient_id = p.patient_id WHERE p.city = {city} AND strftime('%Y', a.admission_date) = {year}`,
		`SELECT DISTINCT p.city, strftime('%Y', a.admission_date) AS year FROM admission AS a JOIN patient AS p ON a.patient_id = p.patient_id`,
		"How many admissions of patients from {city} were there in {year}?",
		"In {year}, how many times were patients living in {city} admitted?"),
	many(medium, `SELECT p.name FROM patient AS p JOIN admission AS a ON a.patient_id = p.patient_id WHERE a.admission_date = {day} ORDER BY p.name`,
		`SELECT admission_date AS day FROM admission GROUP BY 1 HAVING count(*) BETWEEN 3 AND 8`,
		"Which patients were admitted on {day}?",
		"List the names of the patients admitted on {day}."),
	top(medium, 1, "o.name", "FROM doctor AS o JOIN admission AS a ON a.doctor_id = o.doctor_id WHERE strftime('%Y', a.admission_date) = {year} GROUP BY o.doctor_id", "count(*) DESC",
		`SELECT DISTINCT strftime('%Y', admission_date) AS year FROM admission`,
		"Which doctor handled the most admissions in {year}?",
		"Who was the busiest doctor of {year} by number of admissions?"),
	one(medium, `SELECT round(avg(a.total_cost), 2) FROM admission AS a JOIN patient AS p ON a.patient_id = p.patient_id WHERE p.insurance_provider = {insurer}`,
		`SELECT DISTINCT insurance_provider AS insurer FROM patient`,
		"What is the average total cost of admissions of patients insured by {insurer}?",
		"For patients whose insurance provider is {insurer}, what does an admission cost on average?"),
	many(medium, `SELECT o.level, count(*) FROM doctor AS o JOIN department AS d ON o.department_id = d.department_id WHERE d.name = {dept} GROUP BY o.level ORDER BY o.level`,
		`SELECT name AS dept FROM department`,
		"Which levels do the doctors of {dept} have, and how many doctors are at each level?",
		"Break the {dept} doctors down by level: give each level and its number of doctors."),
	top(medium, 3, "m.name", "FROM medication AS m JOIN prescription AS p ON p.medication_id = m.medication_id WHERE m.category = {category} GROUP BY m.medication_id", "count(*) DESC",
		`SELECT category FROM medication GROUP BY 1 HAVING count(*) > 3`,
		"What are the three most frequently prescribed {category} medications?",
		"Name the 3 {category} medications with the most prescriptions."),
	one(medium, `SELECT d.name FROM doctor AS o JOIN department AS d ON o.department_id = d.department_id WHERE o.name = {name}`,
		`SELECT name FROM doctor`,
		"Which department is {name} part of?",
		"In which department does {name} work?"),
	many(medium, `SELECT o.name FROM doctor AS o JOIN department AS d ON o.department_id = d.department_id WHERE d.name = {dept} AND o.level = {level} ORDER BY o.name`,
		`SELECT d.name AS dept, o.level FROM doctor AS o JOIN department AS d ON o.department_id = d.department_id GROUP BY 1, 2`,
		"List the {level} doctors of the {dept} department.",
		"Who are the doctors at {level} level in {dept}?"),

	// Hard: three tables or more.
	one(hard, `SELECT count(DISTINCT a.patient_id) FROM admission AS a JOIN doctor AS o ON a.doctor_id = o.doctor_id JOIN department AS d ON o.department_id = d.department_id WHERE d.name = {dept} AND strftime('%Y', a.admission_date) = {year}`,
		`SELECT name AS dept, year FROM department, (SELECT DISTINCT strftime('%Y', admission_date) AS year FROM admission)`,
		"How many different patients were treated by {dept} doctors in {year}?",
		"Count the distinct patients admitted under a doctor of the {dept} department in {year}."),
	top(hard, 1, "d.name", "FROM department AS d JOIN doctor AS o ON o.department_id = d.department_id JOIN admission AS a ON a.doctor_id = o.doctor_id WHERE strftime('%Y', a.admission_date) = {year} GROUP BY d.department_id", "sum(a.total_cost) DESC",
		`SELECT DISTINCT strftime('%Y', admission_date) AS year FROM admission`,
		"Which department billed the highest total admission cost in {year}?",
		"In {year}, admissions of which department cost the most in total?"),
	many(hard, `SELECT DISTINCT m.name FROM medication AS m JOIN prescription AS r ON r.medication_id = m.medication_id JOIN admission AS a ON r.admission_id = a.admission_id JOIN patient AS p ON a.patient_id = p.patient_id WHERE p.name = {name} ORDER BY m.name`,
		`SELECT p.name FROM patient AS p JOIN admission AS a ON a.patient_id = p.patient_id JOIN prescription AS r ON r.admission_id = a.admission_id GROUP BY p.patient_id HAVING count(DISTINCT r.medication_id) BETWEEN 3 AND 8`,
		"Which medications have been prescribed to {name}?",
		"List every medication prescribed during the hospital stays of {name}."),
	many(hard, `SELECT o.name FROM doctor AS o JOIN department AS d ON o.department_id = d.department_id JOIN admission AS a ON a.doctor_id = o.doctor_id WHERE d.name = {dept} GROUP BY o.doctor_id HAVING count(*) > {n} ORDER BY o.name`,
		`SELECT name AS dept, n FROM department, (SELECT 30 AS n UNION SELECT 45)`,
		"Which {dept} doctors have handled more than {n} admissions?",
		"List the doctors of the {dept} department with over {n} admissions."),
	one(hard, `SELECT count(*) FROM prescription AS r JOIN medication AS m ON r.medication_id = m.medication_id JOIN admission AS a ON r.admission_id = a.admission_id JOIN patient AS p ON a.patient_id = p.patient_id WHERE m.name = {med} AND p.city = {city}`,
		`SELECT m.name AS med, p.city FROM medication AS m, (SELECT DISTINCT city FROM patient) AS p`,
		"How many prescriptions of {med} were written for patients from {city}?",
		"Count the {med} prescriptions given to patients who live in {city}."),
}
