//go:build !unix

package autorun

const oNonblock = 0
