package params

import (
	"regexp"
	"strings"
)

// The HTTP gateway converts query and path parameters before any service
// sees them and words its refusals after Go's parsers ("parsing field
// \"take\": strconv.ParseInt: parsing \"abc\": invalid syntax").
// Plain rewrites those messages so they name the parameter and what it
// accepts, like the errors of this package.

var (
	gatewayQuery = regexp.MustCompile(`^parsing field "([^"]+)": (.*)$`)
	gatewayPath  = regexp.MustCompile(`^type mismatch, parameter: ([^,]+), error: (.*)$`)
	goParse      = regexp.MustCompile(`^strconv\.Parse(Int|Uint|Float|Bool): parsing "(.*)": (invalid syntax|value out of range)$`)
)

// Plain returns msg in plain words when it is a gateway parameter
// conversion error, and ok; otherwise msg unchanged and false.
func Plain(msg string) (string, bool) {
	m := gatewayQuery.FindStringSubmatch(msg)
	if m == nil {
		m = gatewayPath.FindStringSubmatch(msg)
	}
	if m == nil {
		return msg, false
	}
	name, cause := camel(strings.TrimSpace(m[1])), m[2]
	p := goParse.FindStringSubmatch(cause)
	if p == nil {
		return "parameter " + name + ": the value cannot be read", true
	}
	kind, value, why := p[1], p[2], p[3]
	if len(value) > 40 {
		value = value[:40] + "…"
	}
	want := map[string]string{
		"Int":   "a whole number (digits, optionally a leading minus)",
		"Uint":  "a whole number of 0 or more (digits only)",
		"Float": "a number",
		"Bool":  "true or false",
	}[kind]
	if why == "value out of range" {
		return "parameter " + name + ": " + quote(value) + " is out of range for " + want, true
	}
	return "parameter " + name + ": " + quote(value) + " is not " + want, true
}

// camel turns a proto field name (comment_id) into its JSON name
// (commentId); JSON names pass unchanged.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

func quote(s string) string { return `"` + s + `"` }
