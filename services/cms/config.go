package main

import (
	"fmt"
	"os"
	"strings"
	"unicode"

	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/spf13/viper"
)

// setDefaults registers every key so AutomaticEnv finds CMS_<KEY> for it.
func setDefaults(v *viper.Viper, d app.Config) {
	v.SetDefault("target", d.Target)
	v.SetDefault("httpAddr", d.HTTPAddr)
	v.SetDefault("grpcAddr", d.GRPCAddr)
	v.SetDefault("dataDir", d.DataDir)
	v.SetDefault("logLevel", d.LogLevel)
	v.SetDefault("logFormat", d.LogFormat)
	v.SetDefault("shutdownTimeout", d.ShutdownTimeout)
	v.SetDefault("adminUser", d.AdminUser)
	v.SetDefault("adminPassword", d.AdminPassword)
	v.SetDefault("corsOrigins", d.CORSOrigins)
	v.SetDefault("maxUploadBytes", d.MaxUploadBytes)
	setEdgeDefaults(v, d.Edge)
	v.SetDefault("maxValueBytes", d.MaxValueBytes)
	v.SetDefault("maxRequestValueBytes", d.MaxRequestValueBytes)
	v.SetDefault("maxIndexedChars", d.MaxIndexedChars)
	v.SetDefault("indexerMaxAttempts", d.IndexerMaxAttempts)
	v.SetDefault("indexerBatchSize", d.IndexerBatchSize)
	v.SetDefault("jobConcurrency", d.JobConcurrency)
	v.SetDefault("jobAckWait", d.JobAckWait)
	for name, c := range map[string]app.Component{"store": d.Store, "events": d.Events, "search": d.Search,
		"cache": d.Cache, "blobs": d.Blobs} {
		v.SetDefault(name+".engine", c.Engine)
		v.SetDefault(name+".url", c.URL)
		v.SetDefault(name+".prefix", c.Prefix)
	}
	setResilienceDefaults(v, d)
	setQueryDefaults(v, d)
}

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

// configKeys are every key of Config, in the file's (camelCase) spelling.
var configKeys = []string{"target", "httpAddr", "grpcAddr", "dataDir", "logLevel", "logFormat",
	"shutdownTimeout", "adminUser", "adminPassword", "corsOrigins", "maxUploadBytes",
	"maxValueBytes", "maxRequestValueBytes", "maxIndexedChars", "indexerMaxAttempts", "indexerBatchSize",
	"jobConcurrency", "jobAckWait",
	"store.engine", "store.url", "store.prefix", "events.engine", "events.url", "events.prefix",
	"search.engine", "search.url", "search.prefix", "cache.engine", "cache.url", "cache.prefix",
	"blobs.engine", "blobs.url", "blobs.prefix"}

// componentURLEnv are the shared component URLs (the same names the
// integration tests use); they fill a distributed engine's empty url.
var componentURLEnv = map[string]string{
	"store": "CMS_POSTGRES_URL", "events": "CMS_NATS_URL", "search": "CMS_ELASTICSEARCH_URL",
	"cache": "CMS_REDIS_URL", "blobs": "CMS_NATS_URL",
}

func fromViper(v *viper.Viper, d app.Config) (app.Config, error) {
	// viper's AutomaticEnv would look for CMS_HTTPADDR; bind the
	// documented names explicitly.
	for _, key := range append(configKeys[:len(configKeys):len(configKeys)], edgeKeys...) {
		if err := v.BindEnv(key, envKey(key)); err != nil {
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
	c.Edge = edgeFromViper(v)
	c.MaxValueBytes = v.GetInt("maxValueBytes")
	c.MaxRequestValueBytes = v.GetInt("maxRequestValueBytes")
	c.MaxIndexedChars = v.GetInt("maxIndexedChars")
	c.IndexerMaxAttempts = v.GetInt("indexerMaxAttempts")
	c.IndexerBatchSize = v.GetInt("indexerBatchSize")
	c.JobConcurrency = v.GetInt("jobConcurrency")
	c.JobAckWait = v.GetDuration("jobAckWait")
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
