package content

import (
	"testing"

	"github.com/cmsplatform/cms/pkg/model"
)

// The validation kinds of the data types agree with pkg/model's rules.
func TestDataTypesFollowModelRules(t *testing.T) {
	for dt, kind := range dataTypes {
		if (kind == kindRef) != model.IsReference(dt) {
			t.Errorf("%s: validated as kind %v, model.IsReference %v", dt, kind, model.IsReference(dt))
		}
		if (kind == kindXHTML) != model.IsMarkup(dt) {
			t.Errorf("%s: validated as kind %v, model.IsMarkup %v", dt, kind, model.IsMarkup(dt))
		}
	}
}
