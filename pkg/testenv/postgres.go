package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresDatabase creates an empty database cms_test_<random> on the server
// of CMS_POSTGRES_URL, drops it when the test ends, and returns its URL.
// Like URL, it skips locally without the server and fails under CI.
func PostgresDatabase(t testing.TB) string {
	t.Helper()
	serverURL := URL(t, PostgresURL)
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", PostgresURL, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		t.Fatalf("connect %s: %v", PostgresURL, err)
	}
	defer admin.Close(ctx)
	buf := make([]byte, 6)
	_, _ = rand.Read(buf)
	name := "cms_test_" + hex.EncodeToString(buf)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, serverURL)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
