package main

import (
	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/spf13/viper"
)

// queryKeys are the keys of the search query limits (CMS_QUERIES_*),
// kept apart from configKeys so both lists stay easy to merge.
var queryKeys = []string{"queries.concurrent", "queries.queue"}

func setQueryDefaults(v *viper.Viper, d app.Config) {
	v.SetDefault("queries.concurrent", d.Queries.Concurrent)
	v.SetDefault("queries.queue", d.Queries.Queue)
}

func queriesFromViper(v *viper.Viper, c *app.Config) error {
	for _, key := range queryKeys {
		if err := v.BindEnv(key, envKey(key)); err != nil {
			return err
		}
	}
	c.Queries = app.QueryLimits{Concurrent: v.GetInt("queries.concurrent"), Queue: v.GetInt("queries.queue")}
	return nil
}
