package bleve

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Versions and tombstones are kept next to the Bleve index, not in it.
// Bleve's scorch copies its whole internal key space into every snapshot
// and writes it again into its root file for every persisted snapshot, so
// one record per document there made every single-document update cost
// O(documents) in memory and disk: the root file grew with documents ×
// updates. The version store is written per changed document instead.

// versionsFile is the version store of an on-disk index, inside its
// directory (deleted with it).
const versionsFile = "cms-versions.bolt"

var (
	bucketVersions = []byte("versions")
	bucketMeta     = []byte("meta")
	// metaLegacy marks an index created before the version store: its
	// older records are still Bleve internal keys (versionKey).
	metaLegacy = []byte("legacy")
)

// versionRec is the version of one document id; deleted marks a tombstone.
type versionRec struct {
	ver     int64
	deleted bool
}

// Records are 8 bytes big-endian version, then 1 byte: 1 = tombstone (the
// layout of the legacy internal keys too).
func (r versionRec) encode() []byte {
	b := make([]byte, 9)
	binary.BigEndian.PutUint64(b, uint64(r.ver))
	if r.deleted {
		b[8] = 1
	}
	return b
}

func decodeVersion(b []byte) (versionRec, bool) {
	if len(b) != 9 {
		return versionRec{}, false
	}
	return versionRec{ver: int64(binary.BigEndian.Uint64(b)), deleted: b[8] == 1}, true
}

// versionKey is the Bleve internal key of a legacy version record.
func versionKey(id string) []byte { return []byte("v:" + id) }

// versionStore keeps the latest version (or tombstone) of every document
// id an index has seen.
type versionStore interface {
	// get returns the record of id; ok is false when there is none.
	get(id string) (rec versionRec, ok bool, err error)
	// getEach sets recs[i] and known[i] to the record of ids[i] (known
	// false: none), all read in one transaction (one consistent view).
	getEach(ids []string, recs []versionRec, known []bool) error
	// put writes recs (one transaction, durable when it returns).
	put(recs map[string]versionRec) error
	close() error
}

// memVersions is the version store of an in-memory index.
type memVersions struct {
	mu sync.RWMutex
	m  map[string]versionRec
}

func newMemVersions() *memVersions { return &memVersions{m: map[string]versionRec{}} }

func (s *memVersions) get(id string) (versionRec, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.m[id]
	return r, ok, nil
}

func (s *memVersions) getEach(ids []string, recs []versionRec, known []bool) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i, id := range ids {
		recs[i], known[i] = s.m[id]
	}
	return nil
}

func (s *memVersions) put(recs map[string]versionRec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, r := range recs {
		s.m[id] = r
	}
	return nil
}

func (s *memVersions) close() error { return nil }

// boltVersions is the version store of an on-disk index: a bbolt file
// (a B+tree, updated in place, fsynced per put).
type boltVersions struct{ db *bolt.DB }

// openBoltVersions opens (or creates) the version store in dir. legacy
// reports an index whose older records are Bleve internal keys: the file
// did not exist and existing says the index did (it is remembered in the
// file, so later opens know too).
func openBoltVersions(dir string, existing bool) (s *boltVersions, legacy bool, err error) {
	path := filepath.Join(dir, versionsFile)
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, os.ErrNotExist)
	// The timeout turns a second process opening the index into an error,
	// not a hang (bbolt locks the file).
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, false, fmt.Errorf("bleve: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketVersions); err != nil {
			return err
		}
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		if created && existing {
			if err := meta.Put(metaLegacy, []byte{1}); err != nil {
				return err
			}
		}
		legacy = meta.Get(metaLegacy) != nil
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, false, fmt.Errorf("bleve: init %s: %w", path, err)
	}
	return &boltVersions{db: db}, legacy, nil
}

func (s *boltVersions) get(id string) (rec versionRec, ok bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		rec, ok = decodeVersion(tx.Bucket(bucketVersions).Get([]byte(id)))
		return nil
	})
	if err != nil {
		return versionRec{}, false, fmt.Errorf("bleve: read version of %q: %w", id, err)
	}
	return rec, ok, nil
}

func (s *boltVersions) getEach(ids []string, recs []versionRec, known []bool) error {
	err := s.db.View(func(tx *bolt.Tx) error {
		// One cursor for all ids: Bucket.Get makes a cursor (and its
		// stack) per key, Seek reuses them.
		c := tx.Bucket(bucketVersions).Cursor()
		var key []byte
		for i, id := range ids {
			key = append(key[:0], id...)
			recs[i], known[i] = versionRec{}, false
			if k, v := c.Seek(key); bytes.Equal(k, key) {
				recs[i], known[i] = decodeVersion(v)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("bleve: read versions: %w", err)
	}
	return nil
}

func (s *boltVersions) put(recs map[string]versionRec) error {
	if len(recs) == 0 {
		return nil
	}
	// In key order: bbolt splits a page only at commit, and an insertion
	// before the end of one moves every key after it, so 100,000 ids in
	// map order cost over a second of copying, in order a few ms.
	ids := slices.Sorted(maps.Keys(recs))
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketVersions)
		for _, id := range ids {
			if err := b.Put([]byte(id), recs[id].encode()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("bleve: write versions: %w", err)
	}
	return nil
}

func (s *boltVersions) close() error { return s.db.Close() }

// internalGetter reads Bleve internal keys (an index or a reader).
type internalGetter interface {
	GetInternal(key []byte) ([]byte, error)
}

// version returns the record of id: from the version store, or for a
// legacy index from its internal key, read through from (the index or a
// reader of it). ok is false for an id never written.
func (ix *index) version(from internalGetter, id string) (versionRec, bool, error) {
	rec, ok, err := ix.versions.get(id)
	if err != nil || ok || !ix.legacy {
		return rec, ok, err
	}
	b, err := from.GetInternal(versionKey(id))
	if err != nil {
		return versionRec{}, false, fmt.Errorf("bleve: read version of %q: %w", id, err)
	}
	rec, ok = decodeVersion(b)
	return rec, ok, nil
}

// versionsOf returns the records of ids (version) read in one transaction
// of the version store: recs[i] and known[i] are ids[i]'s.
func (ix *index) versionsOf(from internalGetter, ids []string) (recs []versionRec, known []bool, err error) {
	recs, known = make([]versionRec, len(ids)), make([]bool, len(ids))
	err = ix.versions.getEach(ids, recs, known)
	if err != nil || !ix.legacy {
		return recs, known, err
	}
	for i, id := range ids {
		if !known[i] {
			if recs[i], known[i], err = ix.version(from, id); err != nil {
				return nil, nil, err
			}
		}
	}
	return recs, known, nil
}
