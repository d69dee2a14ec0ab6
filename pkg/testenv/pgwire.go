package testenv

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// PGRecorder stands between a process and PostgreSQL on loopback (plain
// protocol: sslmode=disable) and, while recording, keeps one PGRoundTrip
// per round trip its clients make: every group of frontend messages that
// ends in a Sync or a simple Query, after which the client waits for the
// server. Tests use it to count and list the round trips of an operation.
type PGRecorder struct {
	// URL is the database URL through the recorder.
	URL string

	mu    sync.Mutex
	on    bool
	trips []PGRoundTrip
	conns int
	wg    sync.WaitGroup
}

// PGRoundTrip is one round trip of a client to PostgreSQL.
type PGRoundTrip struct {
	// Conn numbers the client's connection (1, 2 … in order of opening).
	Conn int
	// At is when its last message arrived.
	At time.Time
	// Statements are the SQL texts it runs: a simple query's text, each
	// extended-protocol execution's statement, and "prepare: <sql>" for
	// each statement it only parses and describes.
	Statements []string
}

// NewPGRecorder forwards to the server of dbURL (a postgres:// URL) until
// the test ends.
func NewPGRecorder(t testing.TB, dbURL string) *PGRecorder {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("%s: %v", dbURL, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	u.Host = ln.Addr().String()
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	r := &PGRecorder{URL: u.String()}
	var mu sync.Mutex
	var open []net.Conn
	r.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.DialTimeout("tcp", target, 5*time.Second)
			if err != nil {
				_ = c.Close()
				continue
			}
			mu.Lock()
			open = append(open, c, up)
			mu.Unlock()
			r.mu.Lock()
			r.conns++
			n := r.conns
			r.mu.Unlock()
			r.wg.Go(func() {
				_, _ = io.Copy(c, up)
				_ = c.Close()
			})
			r.wg.Go(func() {
				_ = r.relay(n, c, up)
				_ = up.Close()
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range open {
			_ = c.Close()
		}
		mu.Unlock()
		r.wg.Wait()
	})
	return r
}

// Start drops what was recorded and records from now on.
func (r *PGRecorder) Start() {
	r.mu.Lock()
	r.on, r.trips = true, nil
	r.mu.Unlock()
}

// Stop ends recording and returns the round trips since Start.
func (r *PGRecorder) Stop() []PGRoundTrip {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.trips
}

// Snapshot returns the round trips recorded since Start so far.
func (r *PGRecorder) Snapshot() []PGRoundTrip {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]PGRoundTrip(nil), r.trips...)
}

// relay copies the client's messages to the server, recording its round
// trips.
func (r *PGRecorder) relay(conn int, c, up net.Conn) error {
	br := bufio.NewReaderSize(c, 64<<10)
	bw := bufio.NewWriterSize(up, 64<<10)
	// The startup: untyped messages, an SSL or GSS request answered by one
	// byte, then the startup message itself.
	for {
		msg, err := readUntyped(br)
		if err != nil {
			return err
		}
		if _, err := bw.Write(msg); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		code := binary.BigEndian.Uint32(msg[4:8])
		if code != 80877103 && code != 80877104 { // SSLRequest, GSSENCRequest
			break
		}
	}
	prepared := map[string]string{} // statement name → SQL
	var cur []string
	var parsed []string // named statements parsed in this round trip, not yet bound
	for {
		typ, body, err := readTyped(br)
		if err != nil {
			return err
		}
		var hdr [5]byte
		hdr[0] = typ
		binary.BigEndian.PutUint32(hdr[1:], uint32(len(body)+4))
		if _, err := bw.Write(hdr[:]); err != nil {
			return err
		}
		if _, err := bw.Write(body); err != nil {
			return err
		}
		end := false
		switch typ {
		case 'Q':
			cur = append(cur, cstring(body, 0))
			end = true
		case 'P':
			name := cstring(body, 0)
			q := cstring(body, len(name)+1)
			prepared[name] = q
			parsed = append(parsed, name)
		case 'B':
			portal := cstring(body, 0)
			stmt := cstring(body, len(portal)+1)
			cur = append(cur, prepared[stmt])
			for i, p := range parsed {
				if p == stmt {
					parsed = append(parsed[:i], parsed[i+1:]...)
					break
				}
			}
		case 'S':
			end = true
		case 'X':
			_ = bw.Flush()
			return nil
		}
		if end {
			for _, p := range parsed {
				cur = append(cur, "prepare: "+prepared[p])
			}
			r.record(conn, cur)
			cur, parsed = nil, nil
		}
		if br.Buffered() == 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
}

func (r *PGRecorder) record(conn int, stmts []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on {
		r.trips = append(r.trips, PGRoundTrip{Conn: conn, At: time.Now(), Statements: stmts})
	}
}

// readUntyped reads a startup-phase message (length first, no type).
func readUntyped(br *bufio.Reader) ([]byte, error) {
	var l [4]byte
	if _, err := io.ReadFull(br, l[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(l[:])
	if n < 8 || n > 1<<20 {
		return nil, errors.New("pg recorder: bad startup message")
	}
	msg := make([]byte, n)
	copy(msg, l[:])
	_, err := io.ReadFull(br, msg[4:])
	return msg, err
}

// readTyped reads a message: its type byte and its body.
func readTyped(br *bufio.Reader) (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n < 4 || n > 1<<30 {
		return 0, nil, errors.New("pg recorder: bad message length")
	}
	body := make([]byte, n-4)
	_, err := io.ReadFull(br, body)
	return h[0], body, err
}

// cstring is the NUL-terminated string of b at off.
func cstring(b []byte, off int) string {
	if off >= len(b) {
		return ""
	}
	s := string(b[off:])
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}
