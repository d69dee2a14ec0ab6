package app

import (
	"testing"

	"github.com/cmsplatform/cms/pkg/testenv"
)

// The outage tests' fault proxy is testenv.FaultProxy.
const (
	proxyForward  = testenv.ProxyForward
	proxyFrozen   = testenv.ProxyFrozen
	proxyRefusing = testenv.ProxyRefusing
)

func newFaultProxy(t *testing.T, target string) *testenv.FaultProxy {
	t.Helper()
	return testenv.NewFaultProxy(t, target)
}
