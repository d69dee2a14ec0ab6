package app

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// faultProxy stands between a process and a real component on loopback
// and injects its outages: forward (pass bytes both ways), frozen (accept
// connections and never answer; bytes on open connections are swallowed),
// refusing (the port is closed: connection refused), and back to forward
// on the same port.
type faultProxy struct {
	t      *testing.T
	target string
	addr   string
	mode   atomic.Int32
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
	wg     sync.WaitGroup
}

const (
	proxyForward int32 = iota
	proxyFrozen
	proxyRefusing
)

func newFaultProxy(t *testing.T, target string) *faultProxy {
	t.Helper()
	p := &faultProxy{t: t, target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
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

func (p *faultProxy) serve(ln net.Listener) {
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
			if p.mode.Load() == proxyFrozen {
				continue // held open, never answered
			}
			p.wg.Go(func() { p.forward(c) })
		}
	})
}

func (p *faultProxy) track(c net.Conn) {
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
}

func (p *faultProxy) forward(c net.Conn) {
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
			if n > 0 && p.mode.Load() == proxyForward {
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

// set switches the mode. Refusing closes the listener and every open
// connection; leaving it listens on the same address again.
func (p *faultProxy) set(mode int32) {
	p.t.Helper()
	old := p.mode.Swap(mode)
	switch {
	case mode == proxyRefusing && old != proxyRefusing:
		p.mu.Lock()
		_ = p.ln.Close()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.conns = nil
		p.mu.Unlock()
	case old == proxyRefusing && mode != proxyRefusing:
		ln, err := net.Listen("tcp", p.addr)
		if err != nil {
			p.t.Fatalf("listen again on %s: %v", p.addr, err)
		}
		p.serve(ln)
	case mode == proxyForward:
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
