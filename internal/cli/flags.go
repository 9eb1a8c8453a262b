package cli

import (
	"strings"

	"github.com/spf13/pflag"
)

// stringsValue is a repeatable string flag, as pflag's StringArray (each
// occurrence one value) or, with split, its StringSlice (each occurrence
// comma-separated values). pflag's own make their default's text through
// encoding/csv, a 4 KB buffer per flag, on every process start: about
// 110 KB of the root command's 195 KB, paid by every command-line start
// before any flag is parsed. The type names, help text and
// parsing are pflag's, but for CSV quoting in a slice (the one slice
// flag, bench --strategy, takes names).
type stringsValue struct {
	p       *[]string
	split   bool
	changed bool
}

func stringsVar(f *pflag.FlagSet, p *[]string, name, short string, def []string, usage string, split bool) {
	*p = def
	f.VarP(&stringsValue{p: p, split: split}, name, short, usage)
}

// stringArrayVar is f.StringArrayVar without the csv writer.
func stringArrayVar(f *pflag.FlagSet, p *[]string, name, short, usage string) {
	stringsVar(f, p, name, short, nil, usage, false)
}

// stringSliceVar is f.StringSliceVar without the csv writer.
func stringSliceVar(f *pflag.FlagSet, p *[]string, name string, def []string, usage string) {
	stringsVar(f, p, name, "", def, usage, true)
}

func (v *stringsValue) Set(s string) error {
	vals := []string{s}
	if v.split {
		vals = strings.Split(s, ",")
	}
	if !v.changed {
		*v.p = vals
		v.changed = true
		return nil
	}
	*v.p = append(*v.p, vals...)
	return nil
}

// String is "" when empty (pflag's help then shows no default, as for its
// own), else pflag's "[a,b]".
func (v *stringsValue) String() string {
	if len(*v.p) == 0 {
		return ""
	}
	return "[" + strings.Join(*v.p, ",") + "]"
}

func (v *stringsValue) Type() string {
	if v.split {
		return "stringSlice"
	}
	return "stringArray"
}
