package training

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Where a configuration comes from: a YAML or JSON file, GOSQLENV_<KEY>
// environment variables and command-line flags, all keyed by the fields'
// json names (TRL's), through reflection over GRPOConfig.

// LoadGRPOConfig reads a configuration file on top of DefaultGRPOConfig: JSON
// (.json) or YAML (.yaml, .yml). Keys are the fields' snake_case names; an
// unknown key is an error, so that a typo never silently leaves the default.
// Errors name the path. The result is not validated: apply the environment
// and flags, then call Validate.
func LoadGRPOConfig(path string) (GRPOConfig, error) {
	c := DefaultGRPOConfig()
	data, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("training config: %w", err)
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".json":
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return c, fmt.Errorf("training config %s: %w", path, err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return c, fmt.Errorf("training config %s: unexpected data after the JSON object", path)
		}
	case ".yaml", ".yml":
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&c); err != nil && err != io.EOF { // io.EOF: an empty file keeps the defaults
			return c, fmt.Errorf("training config %s: %w", path, err)
		}
		if err := cfgCheckYAMLIntegers(data, &c); err != nil {
			return c, fmt.Errorf("training config %s: %w", path, err)
		}
	default:
		return c, fmt.Errorf("training config %s: unknown extension %q: use .json, .yaml or .yml", path, ext)
	}
	return c, nil
}

// cfgCheckYAMLIntegers rejects a fractional number given for an integer
// field, which yaml.v3 would silently truncate (num_generations: 1.5 → 1).
func cfgCheckYAMLIntegers(data []byte, c *GRPOConfig) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return err
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil
	}
	kinds := map[string]reflect.Kind{}
	for _, f := range cfgFieldsOf(c) {
		kinds[f.key] = f.v.Kind()
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, val := m.Content[i], m.Content[i+1]
		switch kinds[key.Value] {
		case reflect.Int, reflect.Int64:
			if val.Kind == yaml.ScalarNode && val.ShortTag() == "!!float" {
				return fmt.Errorf("line %d: %s: %s is not an integer", val.Line, key.Value, val.Value)
			}
		}
	}
	return nil
}

// ApplyEnv overrides fields from environment variables named EnvPrefix + the
// field's key in upper case (GOSQLENV_LEARNING_RATE=1e-5,
// GOSQLENV_DIFFICULTY_FILTER=easy,medium). Lists are comma-separated; an
// empty value gives an empty list. lookup is os.LookupEnv or a stand-in. A
// value that does not parse is an error naming the variable; the fields
// set before it keep their new values.
func (c *GRPOConfig) ApplyEnv(lookup func(string) (string, bool)) error {
	for _, f := range cfgFieldsOf(c) {
		name := EnvPrefix + strings.ToUpper(f.key)
		s, ok := lookup(name)
		if !ok {
			continue
		}
		if err := cfgSet(f.v, s); err != nil {
			return fmt.Errorf("training config: environment variable %s=%q: %w", name, s, err)
		}
	}
	return nil
}

// RegisterFlags defines one flag per field on fs, named by the field's key
// (-learning_rate, -difficulty_filter=easy,medium), with the current values
// as defaults. Parsing fs writes into c.
func (c *GRPOConfig) RegisterFlags(fs *flag.FlagSet) {
	for _, f := range cfgFieldsOf(c) {
		if !cfgSupported(f.v.Type()) {
			panic(fmt.Sprintf("training: GRPOConfig field %s has unsupported type %s", f.key, f.v.Type()))
		}
		usage := f.help
		if usage != "" {
			usage += " "
		}
		usage += "(env " + EnvPrefix + strings.ToUpper(f.key) + ")"
		fs.Var(&cfgFlag{f.v}, f.key, usage)
	}
}

// cfgField is one settable field of a GRPOConfig.
type cfgField struct {
	key  string // yaml tag: snake_case name
	help string
	v    reflect.Value // addressable, settable
}

// cfgFieldsOf lists the tagged fields of c in declaration order.
func cfgFieldsOf(c *GRPOConfig) []cfgField {
	rv := reflect.ValueOf(c).Elem()
	rt := rv.Type()
	var fields []cfgField
	for i := range rt.NumField() {
		sf := rt.Field(i)
		key, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if key == "" || key == "-" || !sf.IsExported() {
			continue
		}
		fields = append(fields, cfgField{key: key, help: sf.Tag.Get("help"), v: rv.Field(i)})
	}
	return fields
}

func cfgSupported(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Int, reflect.Int64, reflect.Float64, reflect.Bool:
		return true
	}
	return t == cfgStringsType || t == cfgFloatsType
}

// cfgSet parses s into v according to v's type.
func cfgSet(v reflect.Value, s string) error {
	t := v.Type()
	switch {
	case t == cfgStringsType:
		v.Set(reflect.ValueOf(cfgSplitList(s)))
		return nil
	case t == cfgFloatsType:
		items := cfgSplitList(s)
		fs := make([]float64, len(items))
		for i, item := range items {
			x, err := strconv.ParseFloat(item, 64)
			if err != nil {
				return fmt.Errorf("item %d (%q) is not a number", i+1, item)
			}
			fs[i] = x
		}
		v.Set(reflect.ValueOf(fs))
		return nil
	}
	s = strings.TrimSpace(s)
	switch t.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		x, err := strconv.ParseInt(s, 10, t.Bits())
		if err != nil {
			return fmt.Errorf("not an integer")
		}
		v.SetInt(x)
	case reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("not a number")
		}
		v.SetFloat(x)
	case reflect.Bool:
		x, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("not a boolean (use true or false)")
		}
		v.SetBool(x)
	default:
		return fmt.Errorf("unsupported field type %s", t)
	}
	return nil
}

// cfgSplitList splits a comma-separated list, trimming items and dropping
// empty ones ("" is the empty list).
func cfgSplitList(s string) []string {
	items := []string{}
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// cfgFormat writes v the way cfgSet reads it.
func cfgFormat(v reflect.Value) string {
	if !v.IsValid() {
		return ""
	}
	switch x := v.Interface().(type) {
	case []string:
		return strings.Join(x, ",")
	case []float64:
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = strconv.FormatFloat(f, 'g', -1, 64)
		}
		return strings.Join(parts, ",")
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v.Interface())
}

// cfgFlag is the flag.Value of one field.
type cfgFlag struct{ v reflect.Value }

// String formats the field's value (flag.Value).
func (f *cfgFlag) String() string {
	if f == nil {
		return ""
	}
	return cfgFormat(f.v)
}

// Set parses s into the field (flag.Value).
func (f *cfgFlag) Set(s string) error { return cfgSet(f.v, s) }

// IsBoolFlag lets boolean fields be set by a bare -name.
func (f *cfgFlag) IsBoolFlag() bool { return f.v.IsValid() && f.v.Kind() == reflect.Bool }
