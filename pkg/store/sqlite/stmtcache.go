package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// maxCachedStatements bounds each pool's statement cache. The store's
// statement texts are a small fixed set (lists are bound as one JSON
// parameter, so the number of ids never changes the text); the bound only
// guards against a future caller building unbounded texts.
const maxCachedStatements = 256

// stmtCache keeps prepared statements of one pool by their text. SQLite
// spends more time parsing and planning a statement than running the
// small statements of the store, and database/sql prepares afresh for every
// call unless it is handed a prepared *sql.Stmt; with the cache each
// connection parses each text once.
//
// A statement first met inside a write transaction is run unprepared and
// prepared afterwards in the background: the writer pool has a single
// connection, which the open transaction holds, and database/sql cannot
// keep a statement prepared on a transaction beyond it.
type stmtCache struct {
	db *sql.DB

	mu        sync.Mutex
	stmts     map[string]*sql.Stmt
	preparing map[string]bool
	closed    bool
	bg        sync.WaitGroup
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}, preparing: map[string]bool{}}
}

// get returns the prepared statement for query, preparing it on the pool
// if there is room. It returns nil when the statement is to be run
// unprepared.
func (c *stmtCache) get(ctx context.Context, query string) *sql.Stmt {
	c.mu.Lock()
	st, ok := c.stmts[query]
	full := c.closed || len(c.stmts)+len(c.preparing) >= maxCachedStatements
	c.mu.Unlock()
	if ok || full {
		return st
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil // the unprepared run reports the error
	}
	return c.keep(query, st)
}

// getInTx is get for a statement run in a write transaction: a miss is
// prepared in the background once the pool's connection is free.
func (c *stmtCache) getInTx(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[query]; ok || c.closed || c.preparing[query] ||
		len(c.stmts)+len(c.preparing) >= maxCachedStatements {
		return st
	}
	c.preparing[query] = true
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		st, err := c.db.PrepareContext(context.Background(), query)
		c.mu.Lock()
		delete(c.preparing, query)
		c.mu.Unlock()
		if err == nil {
			c.keep(query, st)
		}
	}()
	return nil
}

// keep stores st unless another caller stored one first or the cache was
// closed, and returns the statement to use.
func (c *stmtCache) keep(query string, st *sql.Stmt) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.stmts[query]; ok || c.closed {
		_ = st.Close()
		return old
	}
	c.stmts[query] = st
	return st
}

// close closes every statement; later gets return nil. It waits for the
// background prepares, so call it before closing the pool.
func (c *stmtCache) close() {
	c.mu.Lock()
	c.closed = true
	stmts := c.stmts
	c.stmts = map[string]*sql.Stmt{}
	c.mu.Unlock()
	c.bg.Wait()
	for _, st := range stmts {
		_ = st.Close()
	}
}
