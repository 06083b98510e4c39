package testenv

import (
	"errors"
	"testing"

	"github.com/crawler-dev/crawler/cluster"
)

// RefusesEach checks a package's options: def must validate, and each
// edit of it (by the field it sets out of range) must be refused with a
// *cluster.FieldError naming that field.
func RefusesEach[O any](t *testing.T, def O, validate func(O) error, edits map[string]func(*O)) {
	t.Helper()
	if err := validate(def); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for field, edit := range edits {
		o := def
		edit(&o)
		var fe *cluster.FieldError
		if err := validate(o); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("with %s out of range: %v, want a FieldError naming %s", field, err, field)
		}
	}
}
