package main

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/cmsplatform/cms/services/internal/app"
)

// setting is one configuration key with its environment variable and its
// defaults in `cms run` (laptop) and `cms serve` (distributed).
type setting struct {
	Key, Env, Run, Serve string
}

// settings lists every key of app.Config, read from its yaml tags, so the
// list cannot miss a field: nested structs give dotted keys
// (edge.maxBodyBytes, store.engine).
func settings() []setting {
	var out []setting
	var walk func(prefix string, run, serve reflect.Value)
	walk = func(prefix string, run, serve reflect.Value) {
		for i := 0; i < run.NumField(); i++ {
			f := run.Type().Field(i)
			tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if tag == "" || tag == "-" {
				continue
			}
			key := prefix + tag
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[time.Duration]() {
				walk(key+".", run.Field(i), serve.Field(i))
				continue
			}
			out = append(out, setting{Key: key, Env: envKey(key),
				Run: settingValue(run.Field(i)), Serve: settingValue(serve.Field(i))})
		}
	}
	walk("", reflect.ValueOf(app.DefaultConfig()), reflect.ValueOf(app.DistributedConfig()))
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
