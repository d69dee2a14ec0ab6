# Filters `go vet -v` for `make test`: -v names every package as it is
# compiled for vetting (the standard library and dependencies included on a
# cold cache). Keep one "vet: <package>" progress line per package of this
# module, drop the other names, and pass everything else (findings, "# pkg"
# headers, errors) through. Lines are flushed at once so progress shows live.
/^[^ :#]+$/ {
	if (index($0, "github.com/cmsplatform/cms/") == 1) {
		print "vet: " $0
		fflush()
	}
	next
}
{ print; fflush() }
