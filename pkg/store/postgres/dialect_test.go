package postgres

import "testing"

func TestRebindNumbersPlaceholders(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`WHERE a = ? AND b = ANY(?)`, `WHERE a = $1 AND b = ANY($2)`},
		{`VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, `VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`},
	} {
		if got := (dialect{}).Rebind(c.in); got != c.want {
			t.Errorf("Rebind(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
