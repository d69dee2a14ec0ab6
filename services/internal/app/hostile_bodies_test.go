package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// rawToken marks where rawBody puts a raw JSON fragment (one that
// encoding/json cannot produce: invalid UTF-8, 1e400, 5,000-deep arrays).
const rawToken = "HOSTILE-RAW-TOKEN"

// rawBody marshals m with the value rawToken replaced by raw.
func rawBody(m map[string]any, raw string) []byte {
	b, _ := json.Marshal(m)
	return bytes.Replace(b, []byte(`"`+rawToken+`"`), []byte(raw), 1)
}

// with returns a copy of body with the JSON path set to v.
func with(body map[string]any, path []string, v any) map[string]any {
	b, _ := json.Marshal(body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if m == nil {
		m = map[string]any{}
	}
	cur := m
	for _, p := range path[:len(path)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = v
	return m
}

// oversizedBody is a JSON body beyond the default 4 MiB limit (one copy
// for all cases).
var oversizedBody = []byte(`{"comment":"` + strings.Repeat("x", 4<<20+100) + `"}`)

// cappedSearchText names the Index body fields whose text becomes engine
// clauses (indexquery.MaxPhraseBytes, MaxPhraseTerms).
var cappedSearchText = map[string]bool{"fullText": true, "searchPhrase": true, "pattern": true, "query": true}

// bodyField is a singular scalar field of a request body, by JSON path.
type bodyField struct {
	path []string
	fd   protoreflect.FieldDescriptor
}

// bodyMessage is the message the route's JSON body decodes into; nil
// without a JSON body or when it is a google.protobuf.Value (any JSON).
func bodyMessage(d declared) protoreflect.MessageDescriptor {
	switch b := d.rule.GetBody(); {
	case d.multipart || b == "":
		return nil
	case b == "*":
		return d.md.Input()
	default:
		md := d.md.Input().Fields().ByName(protoreflect.Name(b)).Message()
		if md == nil || strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
			return nil
		}
		return md
	}
}

// bodyFields lists the singular scalar fields of md and, two levels deep,
// of its message fields (well-known types excluded), skipping path
// variables.
func bodyFields(d declared, md protoreflect.MessageDescriptor, prefix []string, depth int) []bodyField {
	var out []bodyField
	fs := md.Fields()
	for i := 0; i < fs.Len(); i++ {
		f := fs.Get(i)
		if len(prefix) == 0 && strings.Contains(d.path, "{"+string(f.Name())) {
			continue
		}
		path := append(append([]string{}, prefix...), f.JSONName())
		switch {
		case f.IsList() || f.IsMap():
		case f.Kind() == protoreflect.MessageKind:
			if depth > 0 && !strings.HasPrefix(string(f.Message().FullName()), "google.protobuf.") {
				out = append(out, bodyFields(d, f.Message(), path, depth-1)...)
			}
		default:
			out = append(out, bodyField{path, f})
		}
	}
	return out
}

func isInt(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return true
	}
	return false
}

func is32(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return true
	}
	return false
}

// bodyCases: malformed, mistyped, deep, huge, oversized, badly encoded and
// injected JSON bodies, empty bodies and wrong content types.
func bodyCases(d declared, w hostileWorld) []hostileCase {
	if d.multipart {
		return uploadCases(d)
	}
	if d.rule.GetBody() == "" {
		return nil
	}
	base := rpcBody(d, "4")
	var out []hostileCase
	add := func(variant string, parts rpcParts, want expect) {
		out = append(out, asAdmin(hostileCase{cat: "body", variant: variant, op: d, parts: parts, want: want}))
	}
	raw := func(variant, body string, want expect) { add(variant, rpcParts{body: []byte(body)}, want) }
	bad := only(http.StatusBadRequest)
	for _, s := range []string{`{`, `{"a":1,}`, `}{`, `nul`, `{"a" 1}`, `{}{}`, `{"a":"unterminated}`, "\xef\xbb\xbf{}"} {
		raw("malformed "+strconv.Quote(s), s, bad)
	}
	add("empty body", rpcParts{emptyBody: true}, acceptable())
	add("empty body with Content-Length 0", rpcParts{body: []byte{}}, acceptable())
	valid := rawBody(base, "")
	for _, ct := range []string{"text/plain", "application/xml", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=latin1"} {
		add("Content-Type "+ct, rpcParts{body: valid, contentType: ct}, acceptable())
	}
	// 5,000-deep arrays and objects, refused by the edge before decoding.
	deep := only(http.StatusBadRequest).early()
	if d.access.GetPermission() == optionsv1.Permission_PERMISSION_CREDENTIALS {
		// The token endpoint's body is at most 4 KiB: the size refuses
		// them first.
		deep = only(http.StatusRequestEntityTooLarge).early()
	}
	raw("5,000-deep arrays", `{"x":`+strings.Repeat("[", 5000)+strings.Repeat("]", 5000)+`}`, deep)
	raw("5,000-deep objects", strings.Repeat(`{"a":`, 5000)+"1"+strings.Repeat("}", 5000), deep)
	// Beyond the default 4 MiB JSON limit: 413 before decoding.
	add("4 MiB + 100 B body", rpcParts{body: oversizedBody}, only(http.StatusRequestEntityTooLarge).early())
	md := bodyMessage(d)
	if md == nil { // a google.protobuf.Value body: any JSON is valid
		for _, s := range []string{`[]`, `"text"`, `42`, `null`, `1e400`, `"\u0000"`, "\"\xff\""} {
			raw("Value body "+strconv.Quote(s), s, acceptable())
		}
		return out
	}
	for _, s := range []string{`[]`, `"text"`, `42`, `true`} {
		raw("top-level "+s, s, bad)
	}
	// Every top-level field with a value of the wrong type.
	fs := md.Fields()
	for i := 0; i < fs.Len(); i++ {
		f := fs.Get(i)
		if strings.Contains(d.path, "{"+string(f.Name())) {
			continue
		}
		var wrong string
		switch {
		case f.IsList():
			wrong = `{"a":1}`
		case f.Kind() == protoreflect.MessageKind && strings.HasPrefix(string(f.Message().FullName()), "google.protobuf.Value"):
			continue
		case f.Kind() == protoreflect.MessageKind:
			wrong = `[1,2]`
		case f.Kind() == protoreflect.StringKind:
			wrong = `{"s":1}`
		case f.Kind() == protoreflect.BoolKind:
			wrong = `"yes"`
		case f.Kind() == protoreflect.EnumKind:
			wrong = `"NO_SUCH_VALUE"`
		default:
			wrong = `"abc"`
		}
		raw(f.JSONName()+" of the wrong type "+wrong, string(rawBody(with(base, []string{f.JSONName()}, rawToken), wrong)), bad)
	}
	if md.Fields().ByJSONName("maxWaitTime") != nil {
		// A minChangeTrackingVersion never reached waits 1 s, not 5.
		base = with(base, []string{"maxWaitTime"}, "00:00:01")
	}
	fields := bodyFields(d, md, nil, 2)
	firstString := true
	for _, bf := range fields {
		name := strings.Join(bf.path, ".")
		set := func(variant, fragment string, want expect) {
			raw(name+" "+variant, string(rawBody(with(base, bf.path, rawToken), fragment)), want)
		}
		switch k := bf.fd.Kind(); {
		case isInt(k):
			huge := acceptable() // int64: exact
			if is32(k) {
				huge = bad
			}
			set("= 9007199254740993", "9007199254740993", huge)
			set("= -9223372036854775809", "-9223372036854775809", bad)
			set("= 1e400", "1e400", bad)
			set("= 1.5", "1.5", bad)
			switch bf.path[len(bf.path)-1] {
			case "take": // Index suggestions: 1..1000; page.take <= 0 is NovaDB's "all"
				if len(bf.path) == 1 {
					set("= 0", "0", bad)
					set("= 100000", "100000", bad)
				}
			case "skip":
				set("= -5", "-5", bad)
			}
		case k == protoreflect.FloatKind || k == protoreflect.DoubleKind:
			set("= 1e400", "1e400", clientError())
			set(`= "NaN"`, `"NaN"`, acceptable())
		case k == protoreflect.StringKind:
			texts := injections
			if d.access.GetPermission() == optionsv1.Permission_PERMISSION_WRITE {
				// A write stores its strings (SQL parameters) and every
				// accepted one costs indexing (a new branch copies its
				// parent's documents): one injection is enough there.
				texts = injections[:1]
			}
			for _, s := range texts {
				set("= "+label(s), strconv.Quote(s), acceptable())
			}
			if firstString {
				firstString = false
				set("with invalid UTF-8", "\"a\xffb\"", bad)
				set("with a raw NUL byte", "\"a\x00b\"", bad)
				set(`with \u0000`, `"a\u0000b"`, acceptable())
				set("of 2 MiB", `"`+strings.Repeat("v", 2<<20)+`"`, acceptable())
				set("with a lone surrogate", `"\ud800"`, acceptable())
			}
			if strings.HasPrefix(d.path, "/apis/index/") && cappedSearchText[bf.path[len(bf.path)-1]] {
				// Capped at 4 KiB before it is split (a 3 MB fullText once cost 2–4 GB and a minute).
				set("of 3 MB of words", strconv.Quote(wordy(3_000_000)), bad)
			}
		}
	}
	// 20 sort keys (at most 8).
	if f := md.Fields().ByJSONName("sortBy"); f != nil && f.IsList() {
		keys := make([]any, 20)
		for i := range keys {
			keys[i] = map[string]any{"sortBy": 0, "reverse": i%2 == 1}
		}
		raw("20 sortBy keys", string(rawBody(with(base, []string{"sortBy"}, keys), "")), bad)
	}
	return out
}

// uploadCases: multipart routes with broken multipart bodies.
func uploadCases(d declared) []hostileCase {
	var out []hostileCase
	add := func(variant, body, ct string) {
		out = append(out, asAdmin(hostileCase{cat: "body", variant: variant, op: d,
			parts: rpcParts{body: []byte(body), contentType: ct}, want: acceptable()}))
	}
	add("JSON instead of multipart", `{"file":"x"}`, "application/json")
	add("multipart without boundary", "--x\r\n\r\n", "multipart/form-data")
	add("multipart with another boundary", "--y\r\nContent-Disposition: form-data; name=\"File\"\r\n\r\nx\r\n--y--\r\n", "multipart/form-data; boundary=x")
	add("multipart never closed", "--x\r\nContent-Disposition: form-data; name=\"File\"; filename=\"a\"\r\n\r\nabc", "multipart/form-data; boundary=x")
	add("multipart with a 10k-char file name", "--x\r\nContent-Disposition: form-data; name=\"File\"; filename=\""+
		strings.Repeat("f", 10000)+"\"\r\n\r\nabc\r\n--x--\r\n", "multipart/form-data; boundary=x")
	add("multipart with a traversal file name", "--x\r\nContent-Disposition: form-data; name=\"Extension\"\r\n\r\n/../../x\r\n"+
		"--x\r\nContent-Disposition: form-data; name=\"File\"; filename=\"../../etc/passwd\"\r\n\r\nabc\r\n--x--\r\n", "multipart/form-data; boundary=x")
	out = append(out, asAdmin(hostileCase{cat: "body", variant: "empty body", op: d, parts: rpcParts{emptyBody: true}, want: acceptable()}))
	return out
}

// valueCases: hostile values in object and branch writes. Integers beyond
// 2^53-1 are refused (never rounded), a value over the 1 MiB value limit
// is 413, deep or badly encoded values are 400.
func valueCases(rpcs []declared, w hostileWorld) []hostileCase {
	byOp := map[string]declared{}
	for _, d := range rpcs {
		byOp[d.op] = d
	}
	row := func(attr int64, lang int, value string) string {
		return fmt.Sprintf(`{"attribute":%d,"language":%d,"variant":0,"value":%s}`, attr, lang, value)
	}
	bodies := map[string]func(value string, integer bool) (rpcParts, string){
		"Cms_CreateObjects": func(value string, integer bool) (rpcParts, string) {
			r := row(1000, 201, value)
			if integer {
				r = row(w.attr, 0, value)
			}
			return rpcParts{}, fmt.Sprintf(`{"objects":[{"meta":{"typeRef":%d},"values":[%s]}]}`, w.typ, r)
		},
		"Cms_UpdateObjects": func(value string, integer bool) (rpcParts, string) {
			r := row(1000, 201, value)
			if integer {
				r = row(w.attr, 0, value)
			}
			return rpcParts{}, fmt.Sprintf(`{"objects":[{"meta":{"id":%d},"values":[%s]}]}`, w.doc, r)
		},
		"Cms_CreateBranch": func(value string, _ bool) (rpcParts, string) {
			return rpcParts{}, `{"comment":"hostile","values":[` + row(1000, 201, value) + `,` + row(4000, 0, "4") + `]}`
		},
		"Cms_UpdateBranch": func(value string, _ bool) (rpcParts, string) {
			return rpcParts{branch: strconv.FormatInt(w.b, 10)}, `{"comment":"hostile","values":[` + row(1000, 201, value) + `]}`
		},
	}
	bad := only(http.StatusBadRequest)
	values := []struct {
		name, value string
		integer     bool
		want        expect
	}{
		{"Integer 9007199254740993 (2^53+1)", "9007199254740993", true, bad},
		{"Integer -9007199254740993", "-9007199254740993", true, bad},
		{"Integer 1e400", "1e400", true, bad},
		{"Integer 9007199254740991 (2^53-1)", "9007199254740991", true, acceptable()},
		{"string of 2 MiB", `"` + strings.Repeat("v", 2<<20) + `"`, false, only(http.StatusRequestEntityTooLarge)},
		{"5,000-deep arrays", strings.Repeat("[", 5000) + strings.Repeat("]", 5000), false, only(http.StatusBadRequest).early()},
		{"invalid UTF-8", "\"caf\xe9\"", false, bad},
		{"raw NUL byte", "\"a\x00b\"", false, bad},
		{`\u0000`, `"a\u0000b"`, false, acceptable()},
		{"an object for a string", `{"a":{"b":1}}`, false, clientError()},
		{"a list of 100,000 numbers", "[" + strings.TrimSuffix(strings.Repeat("1,", 100000), ",") + "]", false, clientError()},
	}
	var out []hostileCase
	for _, op := range []string{"Cms_CreateObjects", "Cms_UpdateObjects", "Cms_CreateBranch", "Cms_UpdateBranch"} {
		d, ok := byOp[op]
		if !ok {
			continue
		}
		for _, val := range values {
			if val.integer && strings.HasSuffix(op, "Branch") {
				continue
			}
			parts, body := bodies[op](val.value, val.integer)
			parts.body = []byte(body)
			out = append(out, asAdmin(hostileCase{cat: "value", variant: val.name, op: d, parts: parts, want: val.want}))
		}
	}
	return out
}

// ifMatchCases: a garbage or weak If-Match on a single-target write is 412
// (or 400), never an unconditional write.
func ifMatchCases(rpcs []declared, w hostileWorld) []hostileCase {
	targets := map[string]rpcParts{
		"Cms_UpdateObjects": {body: []byte(fmt.Sprintf(`{"objects":[{"meta":{"id":%d},"values":[{"attribute":%d,"language":0,"variant":0,"value":7}]}]}`, w.doc, w.attr))},
		"Cms_DeleteObjects": {body: []byte(fmt.Sprintf(`{"comment":"x","objectIds":["%d"]}`, w.spare))},
		"Cms_UpdateBranch":  {branch: strconv.FormatInt(w.b, 10), body: []byte(`{"comment":"x","values":[{"attribute":1000,"language":201,"variant":0,"value":"Bravo"}]}`)},
		"Cms_DeleteBranch":  {branch: strconv.FormatInt(w.victim, 10), body: []byte(`{"comment":"x"}`)},
	}
	var out []hostileCase
	for _, d := range rpcs {
		parts, ok := targets[d.op]
		if !ok {
			continue
		}
		for _, tag := range []string{`"garbage`, `W/"1"`, `"0"`, `"` + strings.Repeat("e", 8<<10) + `"`, "\"a\"\"b\""} {
			out = append(out, asAdmin(hostileCase{cat: "ifmatch", variant: "If-Match " + strconv.Quote(tag[:min(len(tag), 12)]), op: d,
				parts: parts, header: []string{"If-Match", tag}, want: only(http.StatusBadRequest, http.StatusPreconditionFailed)}))
		}
	}
	return out
}
