package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cmsplatform/cms/pkg/doctor"
)

// DoctorChecks are the checks of `cms doctor` for cfg: the risky
// settings, then each component the configuration names (reachable,
// version, what it holds), the indexer's lag and parked events, and the
// clocks. Every check only reads: nothing is created or migrated.
func DoctorChecks(cfg Config) []doctor.Check {
	return []doctor.Check{
		{Name: "settings", Run: func(context.Context) []doctor.Line { return riskySettings(cfg) }},
		{Name: "store", Run: func(ctx context.Context) []doctor.Line { return checkStore(ctx, cfg) }},
		{Name: "events", Run: func(ctx context.Context) []doctor.Line { return checkEvents(ctx, cfg) }},
		{Name: "search", Run: func(ctx context.Context) []doctor.Line { return checkSearch(ctx, cfg) }},
		{Name: "cache", Run: func(ctx context.Context) []doctor.Line { return checkCache(ctx, cfg) }},
		{Name: "blobs", Run: func(ctx context.Context) []doctor.Line { return checkBlobs(ctx, cfg) }},
		{Name: "indexer", Run: func(ctx context.Context) []doctor.Line { return checkIndexer(ctx, cfg) }},
	}
}

// riskySettings are the settings that work but expose an installation:
// the documented default password, CORS for every origin, webhooks to
// private addresses, renders on the API's origin without their sandbox,
// and, on a shared store, bearer tokens without a key.
func riskySettings(cfg Config) []doctor.Line {
	production := cfg.Store.Engine == EnginePostgres
	var out []doctor.Line
	add := func(subject string, risky bool, v doctor.Verdict, ok, detail, fix string) {
		if !risky {
			out = append(out, doctor.Line{Subject: subject, Verdict: doctor.OK, Detail: ok})
			return
		}
		out = append(out, doctor.Line{Subject: subject, Verdict: v, Detail: detail, Fix: fix})
	}
	pwVerdict := doctor.Warn
	if production {
		pwVerdict = doctor.Fail
	}
	add("setting adminPassword", cfg.AdminPassword == DefaultAdminPassword, pwVerdict, "not the default",
		fmt.Sprintf("the bootstrap administrator %q has the documented default password", cfg.AdminUser),
		"set CMS_ADMIN_PASSWORD (and change the password of an existing administrator through the API)")
	add("setting corsOrigins", slices.ContainsFunc(cfg.CORSOrigins, func(o string) bool { return strings.TrimSpace(o) == "*" }),
		doctor.Warn, fmt.Sprintf("%d origins allowed", len(cfg.CORSOrigins)),
		"every origin may call the API from a browser",
		"list the origins of your front ends in CMS_CORS_ORIGINS instead of *")
	add("setting webhookAllowPrivate", cfg.WebhookAllowPrivate, doctor.Warn, "receivers on private addresses refused",
		"webhooks may be sent to loopback, link-local and private addresses (a user with webhook rights reaches your internal network)",
		"unset CMS_WEBHOOK_ALLOW_PRIVATE unless the receivers are on a private network you trust")
	add("setting authTokenKey", production && cfg.AuthTokenKey == "", doctor.Warn, "bearer tokens signed",
		"no token key: bearer tokens (and so the studio's login) are off on a shared store",
		"set CMS_AUTH_TOKEN_KEY to the same random value of at least 32 bytes on every process")
	add("setting renderSeparateOrigin", cfg.RenderSeparateOrigin, doctor.Warn, "renders sandboxed by their Content-Security-Policy",
		"renders are served without their sandbox: safe only if Rendering has a host name no other group answers on",
		"give Rendering a host name of its own (docs/security.md), else unset CMS_RENDER_SEPARATE_ORIGIN")
	return out
}
