package main

import (
	"fmt"
	"time"

	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/spf13/viper"
)

// resilienceKeys are the keys of the component deadlines and the drain
// delay (CMS_TIMEOUTS_SEARCH, CMS_DRAIN_DELAY …), kept apart from
// configKeys so both lists stay easy to merge.
var resilienceKeys = []string{"drainDelay", "timeouts.store", "timeouts.events", "timeouts.search",
	"timeouts.cache", "timeouts.ready"}

func setResilienceDefaults(v *viper.Viper, d app.Config) {
	v.SetDefault("drainDelay", d.DrainDelay)
	for key, t := range timeoutFields(&d.Timeouts) {
		v.SetDefault(key, *t)
	}
}

func resilienceFromViper(v *viper.Viper, c *app.Config) error {
	for _, key := range resilienceKeys {
		if err := v.BindEnv(key, envKey(key)); err != nil {
			return err
		}
	}
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
