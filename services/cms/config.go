package main

import (
	"fmt"
	"os"
	"strings"
	"unicode"

	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/spf13/viper"
)

// envKey is the environment variable of a config key: CMS_HTTP_ADDR for
// httpAddr, CMS_STORE_ENGINE for store.engine.
func envKey(key string) string {
	var b strings.Builder
	b.WriteString("CMS_")
	for i, r := range key {
		switch {
		case r == '.':
			b.WriteByte('_')
		case unicode.IsUpper(r) && i > 0 && key[i-1] != '.':
			b.WriteByte('_')
			b.WriteRune(r)
		default:
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

// componentURLEnv are the shared component URLs (the same names the
// integration tests use); they fill a distributed engine's empty url.
var componentURLEnv = map[string]string{
	"store": "CMS_POSTGRES_URL", "events": "CMS_NATS_URL", "search": "CMS_ELASTICSEARCH_URL",
	"cache": "CMS_REDIS_URL", "blobs": "CMS_NATS_URL",
}

func fromViper(v *viper.Viper, d app.Config) (app.Config, error) {
	// viper's AutomaticEnv would look for CMS_HTTPADDR; bind the
	// documented names explicitly.
	for _, k := range configKeys() {
		if err := v.BindEnv(k.Key, envKey(k.Key)); err != nil {
			return d, err
		}
	}
	c := d
	c.Target = v.GetString("target")
	c.HTTPAddr = v.GetString("httpAddr")
	c.GRPCAddr = v.GetString("grpcAddr")
	c.DataDir = v.GetString("dataDir")
	c.LogLevel = v.GetString("logLevel")
	c.LogFormat = v.GetString("logFormat")
	c.ShutdownTimeout = v.GetDuration("shutdownTimeout")
	c.AdminUser = v.GetString("adminUser")
	c.AdminPassword = v.GetString("adminPassword")
	c.CORSOrigins = v.GetStringSlice("corsOrigins")
	c.MaxUploadBytes = v.GetInt64("maxUploadBytes")
	c.AuthTokenKey = v.GetString("authTokenKey")
	c.AuthTokenLifetime = v.GetDuration("authTokenLifetime")
	c.AuthSessionMaxAge = v.GetDuration("authSessionMaxAge")
	c.Edge = edgeFromViper(v)
	c.Files = filesFromViper(v)
	c.MaxValueBytes = v.GetInt("maxValueBytes")
	c.MaxRequestValueBytes = v.GetInt("maxRequestValueBytes")
	c.MaxIndexedChars = v.GetInt("maxIndexedChars")
	c.IndexerMaxAttempts = v.GetInt("indexerMaxAttempts")
	c.IndexerBatchSize = v.GetInt("indexerBatchSize")
	c.JobConcurrency = v.GetInt("jobConcurrency")
	c.JobAckWait = v.GetDuration("jobAckWait")
	c.JobMaxInputBytes = v.GetInt64("jobMaxInputBytes")
	c.JobCleanupMinAge = v.GetDuration("jobCleanupMinAge")
	c.WebhookKeepAttempts = v.GetInt("webhookKeepAttempts")
	c.WebhookAttemptsMaxAge = v.GetDuration("webhookAttemptsMaxAge")
	c.HistoryRetention = v.GetDuration("historyRetention")
	c.WebhookTimeout = v.GetDuration("webhookTimeout")
	c.WebhookGiveUp = v.GetDuration("webhookGiveUp")
	c.WebhookMaxResponseBytes = v.GetInt64("webhookMaxResponseBytes")
	c.WebhookAllowPrivate = v.GetBool("webhookAllowPrivate")
	c.WebhookMaxLanes = v.GetInt("webhookMaxLanes")
	c.RenderTimeout = v.GetDuration("renderTimeout")
	c.RenderMaxOutputBytes = v.GetInt("renderMaxOutputBytes")
	c.RenderSlots = v.GetInt("renderSlots")
	c.RenderSlotsPerUser = v.GetInt("renderSlotsPerUser")
	c.RenderAdminReserve = v.GetInt("renderAdminReserve")
	c.RenderCacheMaxBytes = v.GetInt64("renderCacheMaxBytes")
	c.MemoryLimit = v.GetInt64("memoryLimit")
	c.SearchColumnsMaxBytes = v.GetInt64("searchColumnsMaxBytes")
	c.RenderSeparateOrigin = v.GetBool("renderSeparateOrigin")
	c.Live = app.LiveConfig{Buffer: v.GetInt("live.buffer"), MaxSubscribers: v.GetInt("live.maxSubscribers"),
		MaxSubscribersPerUser: v.GetInt("live.maxSubscribersPerUser"), AdminReserve: v.GetInt("live.adminReserve"),
		Retained: v.GetInt("live.retained"), Heartbeat: v.GetDuration("live.heartbeat")}
	comps := map[string]*app.Component{"store": &c.Store, "events": &c.Events, "search": &c.Search,
		"cache": &c.Cache, "blobs": &c.Blobs}
	for name, comp := range comps {
		comp.Engine = v.GetString(name + ".engine")
		comp.URL = v.GetString(name + ".url")
		comp.Prefix = v.GetString(name + ".prefix")
		if comp.URL == "" {
			comp.URL = os.Getenv(componentURLEnv[name])
		}
	}
	if c.ShutdownTimeout <= 0 {
		return c, fmt.Errorf("shutdownTimeout must be positive")
	}
	if err := resilienceFromViper(v, &c); err != nil {
		return c, err
	}
	if err := queriesFromViper(v, &c); err != nil {
		return c, err
	}
	return c, nil
}
