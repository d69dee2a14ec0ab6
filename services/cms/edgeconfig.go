package main

import (
	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/spf13/viper"
)

// edgeKeys are the keys of app.EdgeConfig (README "### HTTP edge").
var edgeKeys = []string{"edge.maxBodyBytes", "edge.maxJsonDepth", "edge.readHeaderTimeout", "edge.readTimeout",
	"edge.uploadReadTimeout", "edge.writeTimeout", "edge.idleTimeout", "edge.loginUserFailures",
	"edge.loginAddrFailures", "edge.loginBackoff", "edge.loginMaxBackoff", "edge.loginTracked",
	"edge.passwordChecks", "edge.passwordCheckWait"}

func setEdgeDefaults(v *viper.Viper, d app.EdgeConfig) {
	v.SetDefault("edge.maxBodyBytes", d.MaxBodyBytes)
	v.SetDefault("edge.maxJsonDepth", d.MaxJSONDepth)
	v.SetDefault("edge.readHeaderTimeout", d.ReadHeaderTimeout)
	v.SetDefault("edge.readTimeout", d.ReadTimeout)
	v.SetDefault("edge.uploadReadTimeout", d.UploadReadTimeout)
	v.SetDefault("edge.writeTimeout", d.WriteTimeout)
	v.SetDefault("edge.idleTimeout", d.IdleTimeout)
	v.SetDefault("edge.loginUserFailures", d.LoginUserFailures)
	v.SetDefault("edge.loginAddrFailures", d.LoginAddrFailures)
	v.SetDefault("edge.loginBackoff", d.LoginBackoff)
	v.SetDefault("edge.loginMaxBackoff", d.LoginMaxBackoff)
	v.SetDefault("edge.loginTracked", d.LoginTracked)
	v.SetDefault("edge.passwordChecks", d.PasswordChecks)
	v.SetDefault("edge.passwordCheckWait", d.PasswordCheckWait)
}

func edgeFromViper(v *viper.Viper) app.EdgeConfig {
	return app.EdgeConfig{
		MaxBodyBytes:      v.GetInt64("edge.maxBodyBytes"),
		MaxJSONDepth:      v.GetInt("edge.maxJsonDepth"),
		ReadHeaderTimeout: v.GetDuration("edge.readHeaderTimeout"),
		ReadTimeout:       v.GetDuration("edge.readTimeout"),
		UploadReadTimeout: v.GetDuration("edge.uploadReadTimeout"),
		WriteTimeout:      v.GetDuration("edge.writeTimeout"),
		IdleTimeout:       v.GetDuration("edge.idleTimeout"),
		LoginUserFailures: v.GetInt("edge.loginUserFailures"),
		LoginAddrFailures: v.GetInt("edge.loginAddrFailures"),
		LoginBackoff:      v.GetDuration("edge.loginBackoff"),
		LoginMaxBackoff:   v.GetDuration("edge.loginMaxBackoff"),
		LoginTracked:      v.GetInt("edge.loginTracked"),
		PasswordChecks:    v.GetInt("edge.passwordChecks"),
		PasswordCheckWait: v.GetDuration("edge.passwordCheckWait"),
	}
}
