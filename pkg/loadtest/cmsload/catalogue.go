package cmsload

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cmsplatform/cms/pkg/loadtest"
)

// The catalogue is the data set of the comparison with SQL-backed CMSs:
// articles with a title of words, a price, an author and tags, the
// authors and tags being objects of their own. Its read workloads are
// single reads with references, sorted, filtered and resolved lists,
// word-and-range queries and facets; its write workload patches one
// article's title and price.

// CatalogueOptions size the catalogue; zero values take the defaults.
type CatalogueOptions struct {
	Articles int // default 10,000
	Authors  int // default 100
	Tags     int // default 50
	TagsPer  int // tags per article, default 5
	// Batch is the number of objects per create request (default 500).
	Batch int
	// Wait bounds the wait until Delivery shows the last write (default 2 min).
	Wait time.Duration
}

func (o *CatalogueOptions) defaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Articles, 10_000)
	def(&o.Authors, 100)
	def(&o.Tags, 50)
	def(&o.TagsPer, 5)
	def(&o.Batch, 500)
	if o.Wait <= 0 {
		o.Wait = 2 * time.Minute
	}
}

// CatalogueMaxPrice bounds the articles' prices (0 ≤ price < it).
const CatalogueMaxPrice = 1000

// catalogueWords make the articles' titles; a word-and-range query asks
// for one of them and a price range.
var catalogueWords = []string{"red", "green", "blue", "amber", "violet", "silver", "golden", "plain",
	"north", "south", "river", "harbour", "forest", "meadow", "summit", "valley"}

// Catalogue is a seeded catalogue.
type Catalogue struct {
	Type                           int    // the article type's id
	TypeAPI                        string // its ApiIdentifier (Delivery path segment)
	Title, Price, Author, TagsAttr int    // attribute ids
	TitleAPI, PriceAPI, AuthorAPI  string // their ApiIdentifiers
	TagsAPI                        string
	Articles, Authors, TagIDs      []int
	LastTx                         int64 // transaction of the last write
	seedStarted, seedVisible       time.Time
}

// SeedDuration is the time from the first create request until Delivery
// showed the last one.
func (c *Catalogue) SeedDuration() time.Duration { return c.seedVisible.Sub(c.seedStarted) }

// SeedCatalogue creates the model (a type, four attributes, an author and
// a tag type), the authors, the tags and the articles through the
// Management API, then waits until Delivery shows the last write. Prices
// and references are random with a fixed seed. ApiIdentifiers carry a
// unique suffix, so repeated runs against one deployment do not collide.
func SeedCatalogue(ctx context.Context, t Target, o CatalogueOptions, log io.Writer) (*Catalogue, error) {
	o.defaults()
	if log == nil {
		log = io.Discard
	}
	sfx := strconv.FormatInt(time.Now().UnixNano()%1e12, 36)
	c := &Catalogue{TypeAPI: "article" + sfx, TitleAPI: "title" + sfx, PriceAPI: "price" + sfx,
		AuthorAPI: "author" + sfx, TagsAPI: "tags" + sfx, seedStarted: time.Now()}
	attr := func(api, dataType string, multi bool) string {
		return fmt.Sprintf(`{"meta":{"typeRef":10,"apiIdentifier":%q},"values":[{"attribute":1001,"language":0,"variant":0,"value":%q},`+
			`{"attribute":1004,"language":0,"variant":0,"value":%t}]}`, api, dataType, multi)
	}
	typ := func(api, name string) string {
		return fmt.Sprintf(`{"meta":{"typeRef":0,"apiIdentifier":%q},"values":[{"attribute":1000,"language":201,"variant":0,"value":%q}]}`, api, name)
	}
	model, err := t.create(ctx, "catalogue model", []string{typ(c.TypeAPI, "Article"), typ("person"+sfx, "Person"), typ("label"+sfx, "Label"),
		attr(c.TitleAPI, "String", false), attr(c.PriceAPI, "Decimal", false), attr(c.AuthorAPI, "ObjRef", false), attr(c.TagsAPI, "ObjRef", true)})
	if err != nil {
		return nil, fmt.Errorf("catalogue model: %w", err)
	}
	ids := model.CreatedObjectIDs
	c.Type, c.Title, c.Price, c.Author, c.TagsAttr = ids[0], ids[3], ids[4], ids[5], ids[6]
	named := func(typ, n int, format string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[{"attribute":1000,"language":201,"variant":0,"value":%q}]}`, typ, fmt.Sprintf(format, i))
		}
		return out
	}
	if c.Authors, err = c.createAll(ctx, t, o.Batch, named(ids[1], o.Authors, "Author %d")); err != nil {
		return nil, err
	}
	if c.TagIDs, err = c.createAll(ctx, t, o.Batch, named(ids[2], o.Tags, "Tag %d")); err != nil {
		return nil, err
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	arts := make([]string, o.Articles)
	for i := range arts {
		vals := []string{
			fmt.Sprintf(`{"attribute":1000,"language":201,"variant":0,"value":"Article %05d"}`, i),
			fmt.Sprintf(`{"attribute":%d,"language":0,"variant":0,"value":%q}`, c.Title, catalogueTitle(rnd, i)),
			fmt.Sprintf(`{"attribute":%d,"language":0,"variant":0,"value":%.2f}`, c.Price, float64(rnd.IntN(CatalogueMaxPrice*100))/100),
			fmt.Sprintf(`{"attribute":%d,"language":0,"variant":0,"value":%d}`, c.Author, c.Authors[rnd.IntN(len(c.Authors))]),
		}
		for j := range o.TagsPer {
			vals = append(vals, fmt.Sprintf(`{"attribute":%d,"language":0,"variant":0,"value":%d,"sortReverse":%d}`,
				c.TagsAttr, c.TagIDs[(i+j*7)%len(c.TagIDs)], j))
		}
		arts[i] = fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s]}`, c.Type, strings.Join(vals, ","))
	}
	if c.Articles, err = c.createAll(ctx, t, o.Batch, arts); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "catalogue: %d articles, %d authors, %d tags created; waiting for Delivery\n", len(c.Articles), len(c.Authors), len(c.TagIDs))
	d := &Data{Objects: c.Articles, LastTx: c.LastTx}
	if err := waitVisible(ctx, t, d, o.Wait); err != nil {
		return nil, err
	}
	c.seedVisible = time.Now()
	return c, nil
}

// catalogueTitle is three words of catalogueWords and the article's number.
func catalogueTitle(r *rand.Rand, i int) string {
	w := func() string { return catalogueWords[r.IntN(len(catalogueWords))] }
	return fmt.Sprintf("%s %s %s %d", w(), w(), w(), i)
}

// createAll creates objs in batches and returns their ids.
func (c *Catalogue) createAll(ctx context.Context, t Target, batch int, objs []string) ([]int, error) {
	var ids []int
	for start := 0; start < len(objs); start += batch {
		r, err := t.create(ctx, "catalogue", objs[start:min(start+batch, len(objs))])
		if err != nil {
			return nil, fmt.Errorf("catalogue objects: %w", err)
		}
		ids = append(ids, r.CreatedObjectIDs...)
		c.LastTx = r.TransactionID
	}
	return ids, nil
}

// Catalogue read workloads, by name.
const (
	CatalogueGet       = "get-resolved"    // one article by random id, author and tags resolved
	CatalogueSorted    = "list-sorted"     // 20 articles sorted by price at a random offset
	CatalogueFiltered  = "list-filtered"   // price > N, sorted by price desc, 50, resolved
	CatalogueWordRange = "word-range"      // a title word and a price range
	CatalogueFacets    = "facets-filtered" // occurrences of the tags among articles with price > N
	CatalogueWrite     = "write"           // PATCH of one article's title and price
)

// CatalogueReads lists the read workloads in the order a comparison runs them.
var CatalogueReads = []string{CatalogueGet, CatalogueSorted, CatalogueFiltered, CatalogueWordRange, CatalogueFacets}

// Op is the workload name as one operation against t; each request picks
// its article, offset, word or threshold from a generator of its own
// (seeded, so runs repeat), and its answer is checked.
func (c *Catalogue) Op(t Target, name string) (loadtest.Op, error) {
	var n atomic.Uint64
	pick := func(k int) int { // deterministic, spread over [0, k)
		i := n.Add(1)
		return int((i * 2654435761) % uint64(k))
	}
	base := fmt.Sprintf("%s/branches/%d", deliveryPath, t.Branch)
	list := base + "/types/" + c.TypeAPI
	get := func(ctx context.Context, path, want string) error {
		_, b, _, err := t.do(ctx, http.MethodGet, path, nil, nil, http.StatusOK)
		if err == nil && !bytes.Contains(b, []byte(want)) {
			err = fmt.Errorf("GET %s: the answer lacks %s: %.200s", path, want, b)
		}
		return err
	}
	q := url.QueryEscape
	var do func(context.Context) error
	switch name {
	case CatalogueGet:
		do = func(ctx context.Context) error {
			id := c.Articles[pick(len(c.Articles))]
			return get(ctx, fmt.Sprintf("%s/objects/%d?resolve=%s,%s", base, id, c.AuthorAPI, c.TagsAPI), `"refs":[{`)
		}
	case CatalogueSorted:
		do = func(ctx context.Context) error {
			return get(ctx, fmt.Sprintf("%s/objects?sort=%s&take=20&skip=%d", list, c.PriceAPI, pick(max(1, len(c.Articles)-20))), `"objs":[{`)
		}
	case CatalogueFiltered:
		do = func(ctx context.Context) error {
			return get(ctx, fmt.Sprintf("%s/objects?filter=%s&sort=%s&take=50&resolve=%s,%s", list,
				q(fmt.Sprintf("%s>%d", c.PriceAPI, pick(CatalogueMaxPrice-50))), q(c.PriceAPI+" desc"), c.AuthorAPI, c.TagsAPI), `"objs":[{`)
		}
	case CatalogueWordRange:
		do = func(ctx context.Context) error {
			lo := pick(CatalogueMaxPrice - 200)
			f := fmt.Sprintf("%s:%s&&%s>=%d&&%s<%d", c.TitleAPI, catalogueWords[pick(len(catalogueWords))], c.PriceAPI, lo, c.PriceAPI, lo+200)
			return get(ctx, fmt.Sprintf("%s/objects?filter=%s&take=20", list, q(f)), `"objs":[`)
		}
	case CatalogueFacets:
		do = func(ctx context.Context) error {
			return get(ctx, fmt.Sprintf("%s/occurrences?fields=%s&filter=%s", list, c.TagsAPI, q(fmt.Sprintf("%s>%d", c.PriceAPI, pick(CatalogueMaxPrice-50)))), `"valueOccurrences":[{`)
		}
	case CatalogueWrite:
		do = func(ctx context.Context) error {
			i := pick(len(c.Articles))
			r := rand.New(rand.NewPCG(uint64(i), n.Load()))
			body := fmt.Sprintf(`{"comment":"catalogue write","objects":[{"meta":{"id":%d,"typeRef":%d},"values":[`+
				`{"attribute":%d,"language":0,"variant":0,"value":%q},{"attribute":%d,"language":0,"variant":0,"value":%.2f}]}]}`,
				c.Articles[i], c.Type, c.Title, catalogueTitle(r, i), c.Price, float64(r.IntN(CatalogueMaxPrice*100))/100)
			_, _, _, err := t.do(ctx, http.MethodPatch, fmt.Sprintf("%s/branches/%d/objects", managementPath, t.Branch), []byte(body), nil, http.StatusOK)
			return err
		}
	default:
		return loadtest.Op{}, fmt.Errorf("%w: unknown catalogue workload %q", ErrMix, name)
	}
	return loadtest.Op{Name: name, Weight: 1, Do: do}, nil
}
