package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/spf13/viper"
)

// setting is one configuration key with its environment variable and its
// defaults in `cms run` (laptop) and `cms serve` (distributed).
type setting struct {
	Key, Env, Run, Serve string
}

// configKey is one key of app.Config: its dotted yaml spelling and the
// index path of its field.
type configKey struct {
	Key   string
	Index []int
}

// configKeys lists every key of app.Config, read from its yaml tags, so
// the list cannot miss a field: nested structs give dotted keys
// (edge.maxBodyBytes, store.engine). Defaults, environment variables and
// the README's settings table all come from it.
func configKeys() []configKey {
	var out []configKey
	var walk func(prefix string, t reflect.Type, index []int)
	walk = func(prefix string, t reflect.Type, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if tag == "" || tag == "-" {
				continue
			}
			key, idx := prefix+tag, append(slices.Clone(index), i)
			if f.Type.Kind() == reflect.Struct {
				walk(key+".", f.Type, idx)
				continue
			}
			out = append(out, configKey{Key: key, Index: idx})
		}
	}
	walk("", reflect.TypeFor[app.Config](), nil)
	return out
}

// setDefaults registers every key with its default, and so viper knows
// every key a file or CMS_<KEY> may set.
func setDefaults(v *viper.Viper, d app.Config) {
	dv := reflect.ValueOf(d)
	for _, k := range configKeys() {
		v.SetDefault(k.Key, dv.FieldByIndex(k.Index).Interface())
	}
}

// settings lists every key with its environment variable and defaults.
func settings() []setting {
	run, serve := reflect.ValueOf(app.DefaultConfig()), reflect.ValueOf(app.DistributedConfig())
	var out []setting
	for _, k := range configKeys() {
		out = append(out, setting{Key: k.Key, Env: envKey(k.Key),
			Run: settingValue(run.FieldByIndex(k.Index)), Serve: settingValue(serve.FieldByIndex(k.Index))})
	}
	return out
}

// settingValue writes a default as a user would type it.
func settingValue(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case time.Duration:
		s := x.String()
		for _, zero := range []string{"m0s", "h0m"} {
			if strings.HasSuffix(s, zero) && s != "0s" {
				s = strings.TrimSuffix(s, zero[1:])
			}
		}
		return s
	case []string:
		if len(x) == 0 {
			return ""
		}
		return strings.Join(x, ",")
	case string:
		return x
	}
	return fmt.Sprint(v.Interface())
}

// settingsTable is the README's table of every setting.
func settingsTable() string {
	var b strings.Builder
	b.WriteString("| key | env | `cms run` | `cms serve` |\n|---|---|---|---|\n")
	for _, s := range settings() {
		serve := s.Serve
		if serve == s.Run {
			serve = "same"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", s.Key, s.Env, code(s.Run), code(serve))
	}
	return b.String()
}

// code sets a value in code font; "same" stays a word and an empty value
// is a dash.
func code(s string) string {
	switch s {
	case "same":
		return s
	case "":
		return "—"
	}
	return "`" + s + "`"
}
