package delivery

// WithSortCap returns r with the cap of in-memory sorts lowered to n, so
// tests can reach it with a few objects.
func WithSortCap(r Request, n int) Request {
	r.sortCap = n
	return r
}

// WithoutObjectCache makes s render every object afresh (no objectCache),
// the reference its cached renderings are compared with.
func WithoutObjectCache(s *Service) *Service {
	s.rendered = nil
	return s
}
