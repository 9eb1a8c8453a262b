// Package gitshadow lets commands commit inside the walls without being
// able to plant anything git runs later on the host. The project's own
// git directories (walls.Policy.GitWrite) are each replaced inside by a
// shadow (Open, Session): refs and logs bound read-write, the data files
// (HEAD, the index, packed-refs, …) copied in before each command and
// back after it only when they are what git writes there, everything else
// (config, hooks, info) read-only. Objects are append-only: the shadow's
// own object directory has the real one as its alternate, and after each
// command the host imports loose objects that hash to their names and
// packs through its own index-pack (gitobjects.go). Branch heads that move
// off their history or vanish are reported (RefMove).
//
// Host git runs here only on data a command wrote, outside any repository
// and through gitsafe, so nothing a command configured runs on the host.
package gitshadow
