package delivery

// WithSortCap returns r with the cap of in-memory sorts lowered to n, so
// tests can reach it with a few objects.
func WithSortCap(r Request, n int) Request {
	r.sortCap = n
	return r
}

// WithoutRenderCache makes s render every object afresh (no renderCache),
// the reference its cached renderings are compared with.
func WithoutRenderCache(s *Service) *Service {
	s.renders = nil
	return s
}
