// Package webhooks delivers the change feed to HTTP receivers named by
// webhook definitions (type 210, see docs/webhooks.md): the signature of a
// delivery, the guarded HTTP client and the retry schedule.
package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader is the header carrying a delivery's signature:
//
//	X-Cms-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>
//
// The timestamp is signed with the body so a captured request cannot be
// replayed later than the receiver's tolerance.
const SignatureHeader = "X-Cms-Signature"

// maxSignatureHeader bounds the header Verify parses.
const maxSignatureHeader = 1024

// Errors of Verify.
var (
	ErrSignatureMalformed = errors.New("webhooks: malformed signature header")
	ErrSignatureMismatch  = errors.New("webhooks: signature does not match")
	ErrSignatureExpired   = errors.New("webhooks: signature timestamp outside the tolerance")
)

// Sign returns the SignatureHeader value for body sent at t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks header (a SignatureHeader value) against body for a
// receiver holding secret: some v1 signature must match (several are
// allowed, e.g. while a secret is rotated) and the timestamp must lie within
// tolerance of now (tolerance <= 0: not checked). Receivers written in Go
// call it directly; docs/webhooks.md shows the same steps for others.
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	ts, sigs, err := parseSignature(header)
	if err != nil {
		return err
	}
	want := mac(secret, ts, body)
	ok := false
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			ok = true
		}
	}
	if !ok {
		return ErrSignatureMismatch
	}
	if tolerance > 0 {
		sec, _ := strconv.ParseInt(ts, 10, 64)
		if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
			return ErrSignatureExpired
		}
	}
	return nil
}

// parseSignature splits a header into its timestamp and v1 signatures;
// unknown keys (later versions) are skipped.
func parseSignature(header string) (ts string, sigs [][]byte, err error) {
	if len(header) > maxSignatureHeader {
		return "", nil, ErrSignatureMalformed
	}
	for part := range strings.SplitSeq(header, ",") {
		k, v, found := strings.Cut(strings.TrimSpace(part), "=")
		if !found {
			return "", nil, ErrSignatureMalformed
		}
		switch k {
		case "t":
			if ts != "" {
				return "", nil, ErrSignatureMalformed
			}
			if _, perr := strconv.ParseInt(v, 10, 64); perr != nil || v == "" {
				return "", nil, ErrSignatureMalformed
			}
			ts = v
		case "v1":
			b, derr := hex.DecodeString(v)
			if derr != nil || len(b) != sha256.Size {
				return "", nil, ErrSignatureMalformed
			}
			sigs = append(sigs, b)
		}
	}
	if ts == "" || len(sigs) == 0 {
		return "", nil, ErrSignatureMalformed
	}
	return ts, sigs, nil
}
