package inner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"reflect"
	"runtime"
)

// ShapeArg asks a helper binary for its Shape and nothing else.
const ShapeArg = "__harness-sandbox-shape"

// wireVersion is raised whenever what a stage does with the same
// configuration changes: a helper of another wire version must not run
// for this harness (Shape). A variable only so a test can build a helper
// of another version (-ldflags -X).
var wireVersion = "1"

// Shape fingerprints what a helper binary must agree on with the harness
// that runs it: the wire version, the Go toolchain and platform, and every
// field of the configuration it is handed (name, type, JSON key). A helper
// built from other code that would read the configuration otherwise, and
// so could skip a wall it does not know, has another Shape: harness then
// runs itself instead (backend.HelperExe).
func Shape() string {
	h := sha256.New()
	fmt.Fprintf(h, "wire %s %s %s/%s\n", wireVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	shapeOf(h, reflect.TypeOf(HelperConfig{}), map[reflect.Type]bool{})
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func shapeOf(h hash.Hash, t reflect.Type, seen map[reflect.Type]bool) {
	fmt.Fprintf(h, "%s %s;", t.Kind(), t.String())
	if seen[t] {
		return
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			fmt.Fprintf(h, "%s %q:", f.Name, f.Tag.Get("json"))
			shapeOf(h, f.Type, seen)
		}
	case reflect.Slice, reflect.Array, reflect.Pointer, reflect.Map:
		shapeOf(h, t.Elem(), seen)
	}
}
