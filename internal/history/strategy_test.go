package history

// The benchmark's references as package replay defines them (it imports
// history, so its tests cannot be used here): the layers' switches are
// tested with them.
type testStrategy struct {
	name   string
	layers Layers
}

func (s testStrategy) Name() string   { return s.name }
func (s testStrategy) Layers() Layers { return s.layers }

var (
	seed Strategy = testStrategy{"seed", Layers{CapHeadOnly: true, InTurn: StripEveryStep, StripAtTurnEnd: true, Drop: DropJustUnder}}
	raw  Strategy = testStrategy{"raw", Layers{NoCompact: true}}
)
