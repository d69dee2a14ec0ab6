package main

import (
	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/spf13/viper"
)

func queriesFromViper(v *viper.Viper, c *app.Config) error {
	c.Queries = app.QueryLimits{Concurrent: v.GetInt("queries.concurrent"), Queue: v.GetInt("queries.queue"),
		QueueWait: v.GetDuration("queries.queueWait"), ShedLogInterval: v.GetDuration("queries.shedLogInterval")}
	c.AccessLog = v.GetBool("accessLog")
	return nil
}
