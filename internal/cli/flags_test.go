package cli

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

// TestStringsFlagsParseAsPflags: the repeatable flags parse as pflag's own
// StringArray and StringSlice do, default included.
func TestStringsFlagsParseAsPflags(t *testing.T) {
	def := []string{"x", "y"}
	for _, tc := range []struct {
		name  string
		split bool
		args  []string
	}{
		{"array, unset", false, nil},
		{"array, one", false, []string{"--v", "a,b"}},
		{"array, repeated", false, []string{"--v", "a", "--v=b c", "--v", ""}},
		{"slice, unset", true, nil},
		{"slice, one", true, []string{"--v", "a,b"}},
		{"slice, repeated", true, []string{"--v", "a, b", "--v=c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got, want []string
			ours, theirs := pflag.NewFlagSet("ours", pflag.ContinueOnError), pflag.NewFlagSet("theirs", pflag.ContinueOnError)
			if tc.split {
				stringSliceVar(ours, &got, "v", def, "")
				theirs.StringSliceVar(&want, "v", def, "")
			} else {
				stringArrayVar(ours, &got, "v", "", "")
				theirs.StringArrayVar(&want, "v", nil, "")
			}
			if err := ours.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if err := theirs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %q, pflag %q", got, want)
			}
			if a, b := ours.Lookup("v").Value.Type(), theirs.Lookup("v").Value.Type(); a != b {
				t.Errorf("type %q, pflag %q", a, b)
			}
		})
	}
	if !slices.Equal(def, []string{"x", "y"}) {
		t.Errorf("the default was changed: %q", def)
	}
}
