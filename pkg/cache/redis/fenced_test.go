package redis_test

import (
	"testing"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/cache/cachetest"
)

func TestFencedConformance(t *testing.T) {
	cachetest.RunFenced(t, func(t *testing.T) cache.Fenced {
		c, _, _ := newCache(t)
		return c
	})
}
