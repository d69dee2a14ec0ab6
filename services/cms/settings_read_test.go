package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/spf13/cobra"
)

// documentedSetting is one row of the README's settings table.
type documentedSetting struct{ key, env string }

// documentedSettings reads the keys and variables of the README's table.
func documentedSettings(t *testing.T) []documentedSetting {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []documentedSetting
	for line := range strings.Lines(testenv.Section(t, string(b), settingsBegin, settingsEnd)) {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue // header and separator
		}
		out = append(out, documentedSetting{key: strings.Trim(strings.TrimSpace(cells[1]), "`"),
			env: strings.Trim(strings.TrimSpace(cells[2]), "`")})
	}
	if len(out) < 50 {
		t.Fatalf("only %d settings in the README's table: not the table?", len(out))
	}
	return out
}

// otherValue is a value of a setting unlike its default def and unlike
// the other settings' (n is the row): the Go value the config must hold,
// its spelling in CMS_<KEY> and in the YAML file.
func otherValue(t *testing.T, key string, def reflect.Value, n int) (want any, env string, file any) {
	t.Helper()
	switch x := def.Interface().(type) {
	case time.Duration:
		d := time.Duration(1000+n)*time.Second + 250*time.Millisecond
		return d, d.String(), d.String()
	case string:
		s := fmt.Sprintf("set-%d-%s", n, key)
		return s, s, s
	case []string:
		l := []string{fmt.Sprintf("https://a%d.example", n), fmt.Sprintf("https://b%d.example", n)}
		return l, strings.Join(l, " "), l // several values are separated by spaces in the environment
	case bool:
		return !x, strconv.FormatBool(!x), !x
	case int:
		i := 100000 + 1000*n + 7
		if i == x {
			i++
		}
		return i, strconv.Itoa(i), i
	case int64:
		i := int64(5_000_000_000) + int64(1000*n) + 7
		if i == x {
			i++
		}
		return i, strconv.FormatInt(i, 10), i
	}
	t.Fatalf("%s: no test value for a %s; teach otherValue the type", key, def.Type())
	return nil, "", nil
}

// yamlFile writes a config file setting the dotted key to v (JSON, which
// YAML reads, nested by the key's parts).
func yamlFile(t *testing.T, key string, v any) string {
	t.Helper()
	parts := strings.Split(key, ".")
	doc := map[string]any{parts[len(parts)-1]: v}
	for i := len(parts) - 2; i >= 0; i-- {
		doc = map[string]any{parts[i]: doc}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cms.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// configDiff names the keys whose fields differ between got and want, or
// is empty when the configs are equal.
func configDiff(got, want app.Config) string {
	var d []string
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for _, k := range configKeys() {
		if a, b := g.FieldByIndex(k.Index).Interface(), w.FieldByIndex(k.Index).Interface(); !reflect.DeepEqual(a, b) {
			d = append(d, fmt.Sprintf("%s = %v, want %v", k.Key, a, b))
		}
	}
	if len(d) == 0 && !reflect.DeepEqual(got, want) {
		d = append(d, fmt.Sprintf("a field without a key differs:\n got %+v\nwant %+v", got, want))
	}
	return strings.Join(d, "; ")
}

// TestEveryDocumentedSettingIsRead: each key of the README's settings
// table, set alone to a value unlike its default, in its documented
// variable and in the YAML file, reaches its own field of app.Config and
// changes nothing else, for `cms run` and `cms serve`. So a declared and
// documented setting cannot be ignored by fromViper (nor read into another
// field).
func TestEveryDocumentedSettingIsRead(t *testing.T) {
	documented := documentedSettings(t)
	// Nothing of the environment the test runs in may count: every
	// documented variable and the shared component URLs are empty
	// (viper, and the fallback, take an empty variable as unset).
	for _, s := range documented {
		t.Setenv(s.env, "")
	}
	for _, env := range componentURLEnv {
		t.Setenv(env, "")
	}
	index := map[string][]int{}
	for _, k := range configKeys() {
		index[k.Key] = k.Index
	}
	for _, c := range []struct {
		name     string
		cmd      func() *cobra.Command
		defaults func() app.Config
	}{{"run", newRunCommand, app.DefaultConfig}, {"serve", newServeCommand, app.DistributedConfig}} {
		load := func(t *testing.T, args ...string) app.Config {
			t.Helper()
			cmd := c.cmd()
			if err := cmd.ParseFlags(args); err != nil {
				t.Fatal(err)
			}
			cfg, err := loadConfig(cmd, c.defaults())
			if err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			return cfg
		}
		if d := configDiff(load(t), c.defaults()); d != "" {
			t.Errorf("%s with nothing set: %s", c.name, d)
		}
		for n, s := range documented {
			idx, ok := index[s.key]
			if !ok {
				t.Errorf("the README documents %s, which app.Config does not declare", s.key)
				continue
			}
			if want := envKey(s.key); s.env != want {
				t.Errorf("the README names %s's variable %s; it is %s", s.key, s.env, want)
			}
			def := c.defaults()
			value, envValue, fileValue := otherValue(t, s.key, reflect.ValueOf(def).FieldByIndex(idx), n)
			want := c.defaults()
			reflect.ValueOf(&want).Elem().FieldByIndex(idx).Set(reflect.ValueOf(value))
			t.Run(c.name+"/"+s.key, func(t *testing.T) {
				t.Setenv(s.env, envValue)
				if d := configDiff(load(t), want); d != "" {
					t.Errorf("%s=%s: %s", s.env, envValue, d)
				}
				t.Setenv(s.env, "")
				if d := configDiff(load(t, "--config", yamlFile(t, s.key, fileValue)), want); d != "" {
					t.Errorf("%s: %v in the file: %s", s.key, fileValue, d)
				}
			})
		}
	}
}
