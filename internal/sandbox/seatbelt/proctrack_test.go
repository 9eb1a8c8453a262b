package seatbelt

import (
	"sort"
	"testing"
)

// TestTrackedAdopt: a command's tree is its session, its group, every
// descendant of what was seen, including one that called setsid, but never
// a pid reused by a stranger, harness itself or init.
func TestTrackedAdopt(t *testing.T) {
	const root, self = 100, 50
	table := []procEntry{
		{pid: 1, ppid: 0, pgid: 1, sid: 1, start: 1},
		{pid: self, ppid: 1, pgid: self, sid: self, start: 2},
		{pid: root, ppid: self, pgid: root, sid: root, start: 10},
		{pid: 101, ppid: root, pgid: root, sid: root, start: 11}, // a child
		{pid: 102, ppid: 101, pgid: 102, sid: 102, start: 12},    // setsid'd grandchild
		{pid: 103, ppid: 102, pgid: 102, sid: 102, start: 13},    // its child
		{pid: 104, ppid: 1, pgid: root, sid: root, start: 14},    // orphaned, still in the session
		{pid: 105, ppid: 1, pgid: 105, sid: 105, start: 15},      // orphaned setsid'd, seen before
		{pid: 106, ppid: 1, pgid: 106, sid: 106, start: 99},      // reused pid of a tracked process
		{pid: 200, ppid: self, pgid: 200, sid: 200, start: 20},   // another command of harness
		{pid: 300, ppid: 1, pgid: 300, sid: 300, start: 30},      // a stranger
	}
	tracked := trackedSet{root: 10, 105: 15, 106: 16}
	var got []int
	for _, e := range tracked.adopt(table, root, self) {
		got = append(got, e.pid)
	}
	sort.Ints(got)
	want := []int{root, 101, 102, 103, 104, 105}
	if len(got) != len(want) {
		t.Fatalf("adopt = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("adopt = %v, want %v", got, want)
		}
	}
	if tracked[103] != 13 {
		t.Errorf("a new descendant was not tracked: %v", tracked)
	}
	// Once seen, a process stays tracked after its parent dies.
	table2 := []procEntry{{pid: 103, ppid: 1, pgid: 103, sid: 103, start: 13}}
	if n := len(tracked.adopt(table2, root, self)); n != 1 {
		t.Errorf("a tracked orphan was forgotten (%d found)", n)
	}
}
