package main

import (
	"fmt"
	"time"

	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/spf13/viper"
)

func resilienceFromViper(v *viper.Viper, c *app.Config) error {
	c.DrainDelay = v.GetDuration("drainDelay")
	if c.DrainDelay < 0 {
		return fmt.Errorf("drainDelay must not be negative")
	}
	for key, t := range timeoutFields(&c.Timeouts) {
		*t = v.GetDuration(key)
		if *t < 0 {
			return fmt.Errorf("%s must not be negative", key)
		}
	}
	return nil
}

func timeoutFields(t *app.Timeouts) map[string]*time.Duration {
	return map[string]*time.Duration{"timeouts.store": &t.Store, "timeouts.events": &t.Events,
		"timeouts.search": &t.Search, "timeouts.cache": &t.Cache, "timeouts.ready": &t.Ready}
}
