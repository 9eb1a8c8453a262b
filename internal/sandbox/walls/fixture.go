package walls

import "time"

// Fixture is a Policy's rules given outright, for tests in other packages
// (seatbelt's golden profiles: macOS paths, hostile names). Build checks
// nothing; production makes its Policy with NewPolicy.
type Fixture struct {
	Project                                       string
	Writable, ReadOnly, Protected, DenyRead, Keep []string
	Env                                           []string
	Home                                          string
	Timeout                                       time.Duration
	Cache                                         string
	GitWrite                                      []GitDir
	LoopbackTCP                                   bool
}

// Build is the Policy f describes.
func (f Fixture) Build() *Policy {
	return &Policy{
		project: f.Project, writable: f.Writable, readOnly: f.ReadOnly, protected: f.Protected,
		denyRead: f.DenyRead, keepReadable: f.Keep, env: f.Env, home: f.Home, timeout: f.Timeout,
		cache: f.Cache, gitWrite: f.GitWrite, loopbackTCP: f.LoopbackTCP, idents: &rootIDs{},
	}
}
