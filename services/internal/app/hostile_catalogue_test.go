package app

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The catalogue is derived from the declared RPCs: every operation gets
// the auth, header, path and query cases; the ones with a JSON body the
// body cases; each variant is listed once here and applied mechanically.

// hostileCatalogue lists every case of the suite for w.
func hostileCatalogue(t *testing.T, w hostileWorld) []hostileCase {
	t.Helper()
	rpcs := declaredRPCs()
	if len(rpcs) != operationCount {
		t.Fatalf("%d RPCs, want %d", len(rpcs), operationCount)
	}
	var cases []hostileCase
	for _, d := range rpcs {
		cases = append(cases, authCases(d, w)...)
		cases = append(cases, headerCases(d)...)
		cases = append(cases, pathCases(d)...)
		cases = append(cases, queryCases(d)...)
		cases = append(cases, bodyCases(d, w)...)
	}
	cases = append(cases, valueCases(rpcs, w)...)
	cases = append(cases, ifMatchCases(rpcs, w)...)
	return cases
}

// asAdmin completes a case as the administrator.
func asAdmin(c hostileCase) hostileCase {
	c.user, c.pass = "admin", "test-password"
	return c
}

// identVars are path variables that hold a branch, object, job, comment or
// template id: plain digits or (branches and objects) a GUID or an
// ApiIdentifier; anything else is refused.
var identVars = []string{"branch", "id", "object", "branch_id", "bpo_id", "template_id", "job_id", "comment_id", "webhook_id"}

// isBranchScoped: the RPC needs a grant on a branch named by the request.
func isBranchScoped(d declared) bool {
	p := d.access.GetPermission()
	return p == optionsv1.Permission_PERMISSION_READ || p == optionsv1.Permission_PERMISSION_WRITE
}

// authCases: missing, wrong and malformed credentials are 401 with a
// challenge before anything else; a user reads and writes only the
// branches granted (never another branch's data, however it is spelled).
func authCases(d declared, w hostileWorld) []hostileCase {
	unauthorized := only(http.StatusUnauthorized).early()
	unauthorized.challenge = true
	basic := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	out := []hostileCase{
		{variant: "no credentials"},
		{variant: "wrong password", user: "admin", pass: "wrong"},
		{variant: "unknown user", user: "nobody", pass: "test-password"},
		{variant: "empty user", user: ":", pass: "x"},
		{variant: "Basic !!!", authz: "Basic !!!"},
		{variant: "Bearer token", authz: "Bearer eyJhbGciOiJub25lIn0.e30."},
		{variant: "Basic without colon", authz: basic("admintest-password")},
		{variant: "64 KiB Authorization", authz: basic("admin:" + strings.Repeat("x", 64<<10))},
	}
	for i := range out {
		out[i].cat, out[i].op, out[i].want = "auth", d, unauthorized
	}
	reader := func(variant string, parts rpcParts, want expect) hostileCase {
		return hostileCase{cat: "auth", variant: "reader " + variant, op: d, user: "reader", pass: "reader-pw", parts: parts, want: want}
	}
	if !isBranchScoped(d) {
		return append(out, reader("(authenticated operation)", rpcParts{}, acceptable()))
	}
	if f := d.access.GetOwnerField(); f != "" {
		// A job or comment addressed by id: checked on its branch.
		on := func(id string) rpcParts { return rpcParts{vars: map[string]string{f: id}} }
		owned := w.owned[d.access.GetOwner()]
		out = append(out,
			reader("on B's", on(owned[w.b]), only(http.StatusForbidden).early()),
			reader("on an unknown id", on("999999"), only(http.StatusNotFound)))
		if d.access.GetPermission() == optionsv1.Permission_PERMISSION_WRITE {
			out = append(out, reader("writing A's (read grant only)", on(owned[w.a]), only(http.StatusForbidden).early()))
		} else {
			out = append(out, reader("on A's", on(owned[w.a]), acceptable()))
		}
		return out
	}
	denied := only(http.StatusForbidden, http.StatusNotFound).early()
	if d.access.GetList() {
		// A list answers a branch the reader may not read like one that
		// does not exist: nothing of B (judge checks the marker).
		denied = acceptable()
	}
	b := strconv.FormatInt(w.b, 10)
	out = append(out,
		reader("on branch B", rpcParts{branch: b}, denied),
		reader("on the default branch above A", rpcParts{branch: "4"}, denied))
	if _, inPath := rpcBranchField(d); inPath || d.rule.GetBody() != "*" {
		// Other spellings of B: refused or denied, never B's data.
		spelled := only(http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound)
		if d.access.GetList() {
			spelled = acceptable()
		}
		for _, s := range []string{"+" + b, "%20" + b, b + "%20", "0" + b, "00" + b, b + ".0"} {
			out = append(out, reader("on branch B spelled "+strconv.Quote(s), rpcParts{branch: s}, spelled))
		}
	}
	if _, inPath := rpcBranchField(d); !inPath && !d.access.GetNewBranchParent() {
		// A branch field outside the path, sent as 0 or left out: no
		// branch named must not mean every branch.
		out = append(out, reader("with branch 0", rpcParts{branch: "0"}, acceptable()),
			reader("without a branch", rpcParts{noBranch: true}, acceptable()))
	}
	if d.access.GetPermission() == optionsv1.Permission_PERMISSION_WRITE {
		out = append(out, reader("writing on A (read grant only)", rpcParts{branch: strconv.FormatInt(w.a, 10)}, only(http.StatusForbidden).early()))
	}
	return out
}

// headerCases: headers that are not valid, garbage conditions, huge ones.
func headerCases(d declared) []hostileCase {
	out := []hostileCase{
		{variant: `X-CmsApi-Username "\xff"`, header: []string{"X-Cmsapi-Username", "\xff"}, want: only(http.StatusBadRequest).early()},
		{variant: "X-CmsApi-Username of 64 KiB", header: []string{"X-Cmsapi-Username", strings.Repeat("u", 64<<10)}, want: acceptable()},
		{variant: `If-Match "garbage`, header: []string{"If-Match", `"garbage`}, want: acceptable()},
		{variant: "If-Match of 8 KiB", header: []string{"If-Match", `"` + strings.Repeat("e", 8<<10) + `"`}, want: acceptable()},
		{variant: "If-None-Match garbage", header: []string{"If-None-Match", `W/"x", *, "`}, want: acceptable()},
		{variant: "X-Request-Id of 10 KiB", header: []string{"X-Request-Id", strings.Repeat("r", 10<<10)}, want: acceptable()},
		{variant: "a 256 KiB header", header: []string{"X-Note", strings.Repeat("n", 256<<10)}, want: acceptable()},
		{variant: "X-Cms-Min-Version 2^63", header: []string{"X-Cms-Min-Version", "9223372036854775807", "X-Cms-Max-Wait", "300ms"}, want: retryLater()},
		{variant: "X-Cms-Min-Version garbage", header: []string{"X-Cms-Min-Version", "-1e9x"}, want: acceptable()},
		{variant: "X-Cms-Max-Wait garbage", header: []string{"X-Cms-Max-Wait", "abc"}, want: only(http.StatusBadRequest).early()},
		{variant: "X-Cms-Max-Wait negative", header: []string{"X-Cms-Max-Wait", "-5s"}, want: only(http.StatusBadRequest).early()},
	}
	for i := range out {
		out[i].cat, out[i].op = "header", d
		out[i] = asAdmin(out[i])
	}
	return out
}

// pathVariants are the values every path variable is tried with.
var pathVariants = []struct {
	name, raw string
	ident     expect // for an identifier variable
}{
	{"-1", "-1", clientError()},
	{"+4", "+4", only(http.StatusBadRequest)},
	{"space 4", "%204", only(http.StatusBadRequest)},
	{"0x10", "0x10", clientError()},
	{"20 digits", "99999999999999999999", clientError()},
	{"traversal", "../../etc/passwd", clientError()},
	{"encoded traversal", "%2e%2e%2f%2e%2e%2fetc%2fpasswd", clientError()},
	{"NUL", "%00", clientError()},
	{"invalid UTF-8", "%FF", only(http.StatusBadRequest).early()},
	{"10k chars", strings.Repeat("a", 10000), clientError()},
}

// pathCases tries every variable of the route with every path variant.
func pathCases(d declared) []hostileCase {
	var out []hostileCase
	for _, m := range pathVar.FindAllStringSubmatch(d.path, -1) {
		name := m[1]
		for _, pv := range pathVariants {
			want := acceptable()
			if slices.Contains(identVars, name) || pv.ident.before {
				want = pv.ident
			}
			out = append(out, asAdmin(hostileCase{cat: "path", variant: name + "=" + pv.name, op: d,
				parts: rpcParts{vars: map[string]string{name: pv.raw}}, want: want}))
		}
	}
	return out
}

// queryFields are the request fields the route takes from the query.
func queryFields(d declared) []protoreflect.FieldDescriptor {
	if d.multipart || d.rule.GetBody() == "*" {
		return nil
	}
	var out []protoreflect.FieldDescriptor
	fs := d.md.Input().Fields()
	for i := 0; i < fs.Len(); i++ {
		f := fs.Get(i)
		if strings.Contains(d.path, "{"+string(f.Name())) || string(f.Name()) == d.rule.GetBody() || f.Kind() == protoreflect.MessageKind {
			continue
		}
		if name, _ := rpcBranchField(d); name == string(f.Name()) {
			continue // the auth cases vary the branch
		}
		out = append(out, f)
	}
	return out
}

// injections are filter and search texts aimed at SQL, the search engines'
// query languages and the filter parser.
// and the number of clauses a query may have.
var injections = []string{"' OR 1=1 --", `{"query":{"match_all":{}}}`, "*", "((a", "a))", `\`, "a:b:c", "🙂", "%00",
	strings.Repeat("w ", 3000), strings.Repeat("p* ", 2000)}

// label is s for a case name, shortened.
func label(s string) string {
	if len(s) > 24 {
		return fmt.Sprintf("%.12q… (%d bytes)", s, len(s))
	}
	return strconv.Quote(s)
}

// queryCases: invalid encodings on every route, and per query field the
// out-of-range, unconvertible, injected and unknown values.
func queryCases(d declared) []hostileCase {
	out := []hostileCase{
		{variant: "lang=%FF", parts: rpcParts{query: "lang=%FF"}, want: only(http.StatusBadRequest).early()},
		{variant: "malformed escape %zz", parts: rpcParts{query: "x=%zz"}, want: only(http.StatusBadRequest).early()},
		{variant: "unknown parameter", parts: rpcParts{query: "noSuchParameter=1"}, want: acceptable()},
		{variant: "10k parameters", parts: rpcParts{query: strings.Repeat("a=1&", 10000)}, want: acceptable()},
	}
	q := func(variant, query string, want expect) {
		out = append(out, hostileCase{variant: variant, parts: rpcParts{query: query}, want: want})
	}
	bad := only(http.StatusBadRequest)
	for _, f := range queryFields(d) {
		n := f.JSONName()
		switch n {
		case "take":
			q("take=-1", "take=-1", bad)
			q("take=0", "take=0", bad)
			q("take=100000", "take=100000", bad)
		case "skip":
			q("skip=-5", "skip=-5", bad)
			q("skip=2^31", "skip=2147483648", bad)
		case "resolveDepth", "resolveReverseDepth":
			q(n+"=1000000", n+"=1000000", bad)
			q(n+"=-1", n+"=-1", bad)
		case "ids":
			// Over any identifier limit (the code generator's is 1000).
			q("ids of 5000 identifiers", "ids="+strings.TrimSuffix(strings.Repeat("a,", 5000), ","), clientError())
			q("ids all and more", "ids=all,"+strings.Repeat("x", 300), clientError())
		case "asOf": // a transaction id: positive, committed
			q("asOf=0", "asOf=0", bad)
			q("asOf=-1", "asOf=-1", bad)
			q("asOf=2^62", "asOf=4611686018427387904", bad)
			q("asOf=abc", "asOf=abc", bad)
		case "sort":
			q("20 sort keys", "sort="+strings.TrimSuffix(strings.Repeat("id,", 20), ","), bad)
		case "filter", "pattern", "fields":
			for _, s := range injections {
				q(n+"="+label(s), n+"="+queryEscape(s), acceptable())
			}
			parens := acceptable()
			if n == "filter" {
				parens = clientError()
			}
			q(n+" of 10k open parens", n+"="+strings.Repeat("(", 10000), parens)
		}
		switch f.Kind() {
		case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Sint32Kind, protoreflect.Sint64Kind,
			protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Sfixed32Kind, protoreflect.Fixed32Kind:
			q(n+"=abc", n+"=abc", bad)
			q(n+"=20 digits", n+"=99999999999999999999", bad)
			q(n+"=1e3", n+"=1e3", bad)
		case protoreflect.BoolKind:
			q(n+"=maybe", n+"=maybe", bad)
		case protoreflect.EnumKind:
			q(n+"=unknown enum", n+"=NO_SUCH_VALUE", bad)
			q(n+"=enum 999", n+"=999", acceptable())
		case protoreflect.FloatKind, protoreflect.DoubleKind:
			q(n+"=NaN", n+"=NaN", acceptable())
			q(n+"=1e400", n+"=1e400", clientError())
		case protoreflect.StringKind:
			q(n+" of 10k chars", n+"="+strings.Repeat("s", 10000), acceptable())
			q(n+" with NUL", n+"=a%00b", acceptable())
			if !slices.Contains([]string{"filter", "pattern", "fields"}, n) {
				q(n+"="+injections[0], n+"="+queryEscape(injections[0]), acceptable())
				q(n+" unknown language/variant list", n+"=xx-NOPE,,%2C", acceptable())
			}
		}
	}
	if strings.HasPrefix(d.path, "/apis/cms/v1/") {
		// Management lists page with take and continue: a skip is refused,
		// not silently ignored (a client relying on it would loop forever).
		q("skip=-5 (Management has no skip)", "skip=-5", bad.early())
		q("skip=10 (Management has no skip)", "skip=10", bad.early())
	}
	for i := range out {
		out[i].cat, out[i].op = "query", d
		out[i] = asAdmin(out[i])
	}
	return out
}

// queryEscape escapes s for a query value (spaces as %20).
func queryEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
