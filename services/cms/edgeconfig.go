package main

import (
	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/spf13/viper"
)

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
