package testenv

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// FaultProxy stands between a process and a real component on loopback
// and injects its outages: forward (pass bytes both ways), frozen (accept
// connections and never answer; bytes on open connections are swallowed),
// refusing (the port is closed: connection refused), and back to forward
// on the same port. Tests use it to cut a process off a shared component
// without touching the component itself.
type FaultProxy struct {
	// Addr is the proxy's host:port: give it to the process under test.
	Addr   string
	t      testing.TB
	target string
	mode   atomic.Int32
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
	wg     sync.WaitGroup
}

// Modes of a FaultProxy.
const (
	ProxyForward int32 = iota
	ProxyFrozen
	ProxyRefusing
)

// NewFaultProxy listens on a free loopback port and forwards to target
// (host:port) until the test ends.
func NewFaultProxy(t testing.TB, target string) *FaultProxy {
	t.Helper()
	p := &FaultProxy{t: t, target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.Addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(func() {
		p.mu.Lock()
		if p.ln != nil {
			_ = p.ln.Close()
		}
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *FaultProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.track(c)
			if p.mode.Load() == ProxyFrozen {
				continue // held open, never answered
			}
			p.wg.Go(func() { p.forward(c) })
		}
	})
}

func (p *FaultProxy) track(c net.Conn) {
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
}

func (p *FaultProxy) forward(c net.Conn) {
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	p.track(up)
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 && p.mode.Load() == ProxyForward {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				_ = dst.Close()
				return
			}
		}
	}
	p.wg.Go(func() { pipe(up, c) })
	pipe(c, up)
}

// Set switches the mode. Refusing closes the listener and every open
// connection; leaving it listens on the same address again.
func (p *FaultProxy) Set(mode int32) {
	p.t.Helper()
	old := p.mode.Swap(mode)
	switch {
	case mode == ProxyRefusing && old != ProxyRefusing:
		p.mu.Lock()
		_ = p.ln.Close()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.conns = nil
		p.mu.Unlock()
	case old == ProxyRefusing && mode != ProxyRefusing:
		ln, err := net.Listen("tcp", p.Addr)
		if err != nil {
			p.t.Fatalf("listen again on %s: %v", p.Addr, err)
		}
		p.serve(ln)
	case mode == ProxyForward:
		// Connections that were frozen stay stuck (their bytes are
		// gone); drop them so clients reconnect.
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.conns = nil
		p.mu.Unlock()
	}
}
