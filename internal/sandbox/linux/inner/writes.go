package inner

// Writes is what a command's processes asked to write (wrote_linux.go).
type Writes struct {
	Paths []string
	Known bool
	Why   string // why not known
}
