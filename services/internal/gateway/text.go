package gateway

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/metadata"
)

// # Plain text answers
//
// An operation whose response_body is a string (the code generator's
// source) answers the raw text (text/plain; charset=utf-8) unless the
// request explicitly accepts JSON: only then is it the JSON string NovaDB's
// document declares. That is what a string-returning operation does on
// NovaDB's server stack, where fetch's default "Accept: */*", a missing
// Accept or "text/plain" get the text. The rule (PrefersText):
//
//   - JSON is chosen when Accept names application/json itself (not only
//     through */* or application/*) with a q above 0, and no range that
//     matches text/plain has a higher q; at equal q the JSON wins, unless
//     text/plain itself is listed before application/json.
//   - Everything else (no Accept, */*, text/*, text/plain, a type we do not
//     serve) is the raw text.
//
// negotiateText applies the rule to every request of the mux before the
// marshaler is picked: it replaces Accept by exactly "text/plain" or
// "application/json", the two marshalers registered for them. Only string
// answers differ between the two (TextPlain writes every other answer as
// Binary does), so the rule holds for every string-returning operation at
// once, and errors stay ProblemDetails whatever Accept says. Handlers that
// answer strings mix WantsText into their ETag and send Vary: Accept.

// MIMETextPlain is the Accept value negotiateText sets when the raw text
// wins (grpc-gateway compares Accept values exactly).
const MIMETextPlain = "text/plain"

// MIMEJSON is the Accept value negotiateText sets when JSON wins.
const MIMEJSON = "application/json"

// ContentTypeText is the content type of a plain text answer.
const ContentTypeText = "text/plain; charset=utf-8"

// TextPlain is the marshaler for Accept: text/plain: strings raw, anything
// else (and all decoding) as Binary.
type TextPlain struct {
	*Binary
}

// ContentType implements runtime.Marshaler. grpc-gateway passes the
// response message (wrapped with its response_body field), not the field.
func (t TextPlain) ContentType(v any) string {
	if rb, ok := v.(interface{ XXX_ResponseBody() any }); ok {
		v = rb.XXX_ResponseBody()
	}
	if _, ok := v.(string); ok {
		return ContentTypeText
	}
	return t.Binary.ContentType(v)
}

// Marshal implements runtime.Marshaler.
func (t TextPlain) Marshal(v any) ([]byte, error) {
	if s, ok := v.(string); ok {
		return []byte(s), nil
	}
	return t.Binary.Marshal(v)
}

// WantsText reports whether a string answer to the request is the raw
// text (PrefersText over the forwarded Accept values; after negotiateText
// that is one of the two canonical values).
func WantsText(ctx context.Context) bool {
	return PrefersText(metadata.ValueFromIncomingContext(ctx, "accept"))
}

// PrefersText reports whether the Accept header values ask a string
// answer as raw text rather than as a JSON string (the rule above).
func PrefersText(accept []string) bool {
	const (
		none     = -1
		wildcard = 0 // */*
		group    = 1 // text/* or application/*
		exact    = 2
	)
	type best struct {
		q     float64
		level int
		pos   int // position of the exact range
	}
	text, json := best{level: none, pos: -1}, best{level: none, pos: -1}
	consider := func(b *best, level int, q float64, pos int) {
		if level > b.level {
			*b = best{q: q, level: level, pos: b.pos}
		}
		if level == exact && b.pos < 0 {
			b.pos = pos
		}
	}
	pos := 0
	for _, v := range accept {
		for _, r := range strings.Split(v, ",") {
			mt, q, ok := mediaRange(r)
			if !ok {
				continue
			}
			pos++
			switch mt {
			case "*/*":
				consider(&text, wildcard, q, pos)
				consider(&json, wildcard, q, pos)
			case "text/*":
				consider(&text, group, q, pos)
			case "application/*":
				consider(&json, group, q, pos)
			case MIMETextPlain:
				consider(&text, exact, q, pos)
			case MIMEJSON:
				consider(&json, exact, q, pos)
			}
		}
	}
	if json.level != exact || json.q <= 0 {
		return true
	}
	switch {
	case text.level == none || text.q < json.q:
		return false
	case text.q > json.q:
		return true
	}
	return text.level == exact && text.pos < json.pos
}

// mediaRange parses one media range of Accept: the lower-case type/subtype
// and its q (1 when absent; a malformed q makes the range count as 0).
func mediaRange(r string) (string, float64, bool) {
	parts := strings.Split(r, ";")
	mt := strings.ToLower(strings.TrimSpace(parts[0]))
	if mt == "" {
		return "", 0, false
	}
	q := 1.0
	for _, p := range parts[1:] {
		k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || f < 0 || f > 1 {
			f = 0
		}
		q = f
	}
	return mt, q, true
}

// negotiateText replaces the request's Accept by the canonical value of
// the representation PrefersText chooses, so that the mux picks TextPlain
// or Binary by it (and WantsText agrees) whatever the client sent.
func negotiateText(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, pathParams map[string]string) {
		if PrefersText(r.Header.Values("Accept")) {
			r.Header.Set("Accept", MIMETextPlain)
		} else {
			r.Header.Set("Accept", MIMEJSON)
		}
		next(w, r, pathParams)
	}
}
