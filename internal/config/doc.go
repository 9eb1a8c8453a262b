// Package config turns ~/.agents/env, the process environment and command
// flags into one Config value. Precedence: flags over environment over the
// file, so a one-off override never needs the file edited.
//
// The file holds KEY=VALUE lines with # comments, an optional "export "
// prefix and single- or double-quoted values. It usually holds an API key, so
// a file readable by group or others earns a warning.
package config
