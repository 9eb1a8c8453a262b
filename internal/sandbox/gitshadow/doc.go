// Package gitshadow lets commands commit inside the walls without being
// able to plant anything git runs later on the host, or to destroy the
// repository's history. The project's own git directories
// (walls.Policy.GitWrite) are each replaced inside by a shadow (Open,
// Session): the data files (HEAD, the index, …) copied in before each
// command and back after it only when they are what git writes there,
// everything else (config, hooks, info) read-only.
//
// History only grows. Objects are append-only: the shadow's own object
// directory has the real one as its alternate, the host imports each
// object a command writes as soon as its name appears (an inotify watch,
// watch_linux.go) and again after the command, only loose objects that
// hash to their names and packs through its own index-pack
// (gitobjects.go), each only once what it links to is there (links.go). Refs, reflogs and packed-refs are the shadow's own
// copies, judged after each command (refs.go): a ref reaches the host
// only with every object it reaches, refs/replace never changes, tags
// are put back, reflog lines and an index naming missing objects stay
// out, so the host's git fsck passes after any command; branch and notes
// refs that move off their history or vanish are reported (RefMove), and
// a ref refused for lost objects is reported with the commit id. shallow
// and info/grafts never reach the host (info/ is read-only, shallow a
// name the shadow drops).
//
// Host git runs here only through gitsafe: on data a command wrote
// outside any repository, or on the real git directory, whose config
// and hooks no command can write.
package gitshadow
