package auth

// # Sessions
//
// A login starts a session: 8 random bytes (its id) and the login's time,
// both carried by every token of the session, with the number of renewals
// that led to the token. A renewal (Renew) answers the session's next
// token and makes the one it renewed, and every older one, invalid: the
// user's session record — one stored value per user (pkg/content,
// attribute userTokenSessions), written in a write transaction, so every
// process sees it at the next request — holds, per session that was
// renewed, the number of its newest token. Verify reads it with the
// account (no extra query) and accepts a token of a session in the record
// only with the newest number, a token of a session not in it only if it
// was never renewed (number 0): a login writes nothing.
//
// Sessions end:
//   - at their maximum age (authSessionMaxAge) after the login: no token of
//     the session is accepted from then on (ErrSessionExpired), a renewed
//     token expires at that time at the latest, a renewal is refused;
//   - when the user logs out or the password changes (the credential
//     stamp, token.go; a logout also empties the record);
//   - when the newest token expires without being renewed; its entry is
//     dropped by the next renewal of the user (all its tokens expired);
//   - when a user holds more than MaxTokenSessions renewed sessions: the
//     least recently renewed one whose first token has expired is dropped
//     (its tokens are refused); when there is none, the renewal is refused
//     (ErrTooManySessions) and the client logs in again.
//
// Two browser tabs holding the same token may both renew it. Writes are
// serialized, so one renewal wins; the other, and any repeated renewal of
// the same token within RenewGrace (a lost answer retried), answers the
// very same successor (a token is a deterministic function of its
// contents: the record keeps the successor's issue and expiry times), and
// both tabs go on with one token. Outside a renewal the replaced token is
// refused at once; after the grace a renewal of it too (ErrSuperseded).

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Session limits.
const (
	// DefaultRenewGrace is how long after a renewal a renewal of the token
	// it replaced answers the same successor.
	DefaultRenewGrace = 30 * time.Second
	// MaxRenewGrace bounds RenewGrace.
	MaxRenewGrace = 5 * time.Minute
	// MaxTokenSessions bounds a user's session record: at most this many
	// renewed sessions at once.
	MaxTokenSessions = 64

	sessionIDBytes = 8
)

// ErrTooManySessions means a renewal would make the user's session record
// hold more than MaxTokenSessions live sessions. It is an ErrBadToken: the
// client logs in again (which writes no record).
var ErrTooManySessions = fmt.Errorf("%w: too many sessions of this user were renewed recently; log in again", ErrBadToken)

// TokenSession is the session a token belongs to.
type TokenSession struct {
	ID [sessionIDBytes]byte
	// Start is the login's time (Unix seconds); 0 = no session.
	Start int64
	// Renewal counts the renewals from the login to this token.
	Renewal int64
}

type renewalKey struct{}

// WithRenewal marks ctx as the authentication of a renewal
// (Auth_RenewToken): Verify then also accepts the token a renewal replaced
// less than RenewGrace ago, for which Renew answers the same successor.
func WithRenewal(ctx context.Context) context.Context {
	return context.WithValue(ctx, renewalKey{}, true)
}

func renewal(ctx context.Context) bool {
	v, _ := ctx.Value(renewalKey{}).(bool)
	return v
}

// sessionEntry is the record of one renewed session: its newest token's
// renewal number, issue time and expiry (Unix seconds), and the login's
// time. Stored as "id:renewal:issued:expires:start", entries separated by
// spaces.
type sessionEntry struct {
	id                              [sessionIDBytes]byte
	renewal, issued, expires, start int64
}

func (e sessionEntry) String() string {
	return hex.EncodeToString(e.id[:]) + ":" + strconv.FormatInt(e.renewal, 10) + ":" + strconv.FormatInt(e.issued, 10) + ":" +
		strconv.FormatInt(e.expires, 10) + ":" + strconv.FormatInt(e.start, 10)
}

// parseEntry reads one entry; ok is false for a malformed one.
func parseEntry(s string) (sessionEntry, bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 5 || len(parts[0]) != 2*sessionIDBytes {
		return sessionEntry{}, false
	}
	var e sessionEntry
	if _, err := hex.Decode(e.id[:], []byte(parts[0])); err != nil {
		return sessionEntry{}, false
	}
	nums := []*int64{&e.renewal, &e.issued, &e.expires, &e.start}
	for i, p := range nums {
		n, err := strconv.ParseInt(parts[i+1], 10, 64)
		if err != nil || n < 0 {
			return sessionEntry{}, false
		}
		*p = n
	}
	return e, e.renewal > 0
}

// findSession returns the entry of session id in record without parsing
// the others (Verify runs it on every bearer request).
func findSession(record string, id [sessionIDBytes]byte) (sessionEntry, bool) {
	key := hex.EncodeToString(id[:]) + ":"
	for rest := record; ; {
		i := strings.Index(rest, key)
		if i < 0 {
			return sessionEntry{}, false
		}
		if i == 0 || rest[i-1] == ' ' {
			s := rest[i:]
			if j := strings.IndexByte(s, ' '); j >= 0 {
				s = s[:j]
			}
			return parseEntry(s)
		}
		rest = rest[i+len(key):]
	}
}

// parseSessions reads a record, dropping malformed entries and keeping at
// most MaxTokenSessions+1 (a record is written with at most
// MaxTokenSessions).
func parseSessions(record string) []sessionEntry {
	var out []sessionEntry
	for _, s := range strings.Fields(record) {
		if e, ok := parseEntry(s); ok && len(out) <= MaxTokenSessions {
			out = append(out, e)
		}
	}
	return out
}

func formatSessions(entries []sessionEntry) string {
	parts := make([]string, len(entries))
	for i, e := range entries {
		parts[i] = e.String()
	}
	return strings.Join(parts, " ")
}

// current checks the token c against the user's session record: nil when
// it is its session's newest token (or, in a renewal, the one a renewal
// replaced less than the grace ago).
func (t *Tokens) current(record string, c claims, inRenewal bool) error {
	e, ok := findSession(record, c.session.ID)
	switch {
	case !ok && c.session.Renewal == 0:
		return nil // never renewed
	case !ok || e.start != c.session.Start || c.session.Renewal > e.renewal:
		return ErrBadToken // the session ended (dropped from a full record)
	case c.session.Renewal == e.renewal:
		return nil
	case inRenewal && c.session.Renewal == e.renewal-1 && t.now().Before(time.Unix(e.issued, 0).Add(t.grace)):
		return nil
	}
	return ErrSuperseded
}

// Renew returns the successor of the token of p.Session (p as Verify in a
// context of WithRenewal returned it) and records it, so that the token
// renewed is refused from now on. A repeated renewal of the same token
// within the grace answers the same successor and writes nothing. Refusals:
// ErrSessionExpired beyond the session's maximum age, ErrSuperseded for a
// token replaced before, ErrTooManySessions, ErrBadToken when the user's
// credentials changed since the token was checked.
func (t *Tokens) Renew(ctx context.Context, p Principal) (Token, error) {
	s := p.Session
	var tok Token
	err := t.accounts.UpdateTokenSessions(ctx, p.UserID, func(cur Principal) (string, bool, error) {
		if cur.Credential == "" || cur.Credential != p.Credential {
			return "", false, ErrBadToken
		}
		now := t.now().Unix()
		end := s.Start + secs(t.maxAge)
		if now >= end {
			return "", false, ErrSessionExpired
		}
		entries := t.prune(parseSessions(cur.TokenSessions), now)
		i := slices.IndexFunc(entries, func(e sessionEntry) bool { return e.id == s.ID })
		next := sessionEntry{id: s.ID, renewal: s.Renewal + 1, issued: now, expires: min(now+secs(t.lifetime), end), start: s.Start}
		switch {
		case i < 0 && s.Renewal == 0:
			entries = append(entries, next)
		case i >= 0 && entries[i].start == s.Start && entries[i].renewal == s.Renewal:
			entries[i] = next
		case i >= 0 && entries[i].start == s.Start && entries[i].renewal == s.Renewal+1 && now < entries[i].issued+secs(t.grace):
			e := entries[i] // a repeated renewal: the same successor
			tok = t.sign(cur, TokenSession{ID: e.id, Start: e.start, Renewal: e.renewal}, e.issued, e.expires)
			return "", false, nil
		default:
			return "", false, ErrSuperseded
		}
		if len(entries) > MaxTokenSessions {
			var err error
			if entries, err = t.evict(entries, s.ID, now); err != nil {
				return "", false, err
			}
		}
		tok = t.sign(cur, TokenSession{ID: next.id, Start: next.start, Renewal: next.renewal}, next.issued, next.expires)
		return formatSessions(entries), true, nil
	})
	if err != nil {
		return Token{}, t.refuse(err)
	}
	t.stats.renewed.Add(1)
	return tok, nil
}

// prune drops the entries of sessions that ended: their newest token
// expired (and with it every older one), or the session is beyond its
// maximum age. The margin covers processes whose clocks differ a little.
func (t *Tokens) prune(entries []sessionEntry, now int64) []sessionEntry {
	margin := secs(issueSkew)
	return slices.DeleteFunc(entries, func(e sessionEntry) bool {
		return now >= e.expires+margin || now >= e.start+secs(t.maxAge)+margin
	})
}

// evict drops the least recently renewed session other than keep whose
// first token has expired (dropping a session whose first token is still
// valid would make that token acceptable again): ErrTooManySessions when
// there is none.
func (t *Tokens) evict(entries []sessionEntry, keep [sessionIDBytes]byte, now int64) ([]sessionEntry, error) {
	victim := -1
	for i, e := range entries {
		if e.id != keep && now >= e.start+secs(t.lifetime)+secs(issueSkew) && (victim < 0 || e.issued < entries[victim].issued) {
			victim = i
		}
	}
	if victim < 0 {
		return nil, ErrTooManySessions
	}
	return slices.Delete(entries, victim, victim+1), nil
}

// TokenRefusal is the client's message for err, a refused bearer token:
// why a genuine token was refused where that helps the client (the session
// expired: log in again; the token was renewed: use the newer one), else
// the same message whatever was wrong.
func TokenRefusal(err error) string {
	switch {
	case errors.Is(err, ErrSessionExpired):
		return "the session expired: it started at the login more than authSessionMaxAge ago and cannot be renewed; log in again"
	case errors.Is(err, ErrSuperseded):
		return "this bearer token was renewed: only the newest token of a session is accepted"
	case errors.Is(err, ErrTooManySessions):
		return "too many sessions of this user were renewed recently; log in again"
	}
	return "invalid, expired or revoked bearer token"
}
