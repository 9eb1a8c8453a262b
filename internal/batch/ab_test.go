package batch

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func cost(v float64) *float64 { return &v }

// The A/B report's format is fixed: golden files for the table and the
// JSON, over a task set with checks passing and failing, a task without a
// check, one unfinished, and one whose cost is unknown.
func TestABReportGolden(t *testing.T) {
	tasks := []Task{{ID: "t1"}, {ID: "t2"}, {ID: "t3"}, {ID: "t4"}, {ID: "t5"}}
	zero, one := 0, 1
	a := Arm{Name: "A", Results: map[string]Result{
		"t1": {ID: "t1", Status: Solved, Steps: 3, CostUSD: cost(0.012), CheckExit: &zero},
		"t2": {ID: "t2", Status: Solved, Steps: 5, CostUSD: cost(0.020), CheckExit: &zero},
		"t3": {ID: "t3", Status: Failed, Steps: 8, CostUSD: cost(0.031), CheckExit: &one},
		"t4": {ID: "t4", Status: Done, Steps: 2, CostUSD: cost(0.004)},
		"t5": {ID: "t5", Status: Solved, Steps: 4, CostUSD: cost(0.010), CheckExit: &zero},
	}}
	b := Arm{Name: "B", Settings: []string{"CAP=10000", "TRIM_OLD_TEXT=on"}, Results: map[string]Result{
		"t1": {ID: "t1", Status: Solved, Steps: 3, CostUSD: cost(0.009), CheckExit: &zero},
		"t2": {ID: "t2", Status: Failed, Steps: 7, CostUSD: cost(0.016), CheckExit: &one},
		"t3": {ID: "t3", Status: Solved, Steps: 6, CostUSD: cost(0.022), CheckExit: &zero},
		"t4": {ID: "t4", Status: Done, Steps: 2, CostUSD: cost(0.003)},
		"t5": {ID: "t5", Status: Interrupted, Steps: 1, CostUSD: cost(0.001)},
	}}
	r := CompareAB(tasks, a, b)
	if r.A.Solved != 3 || r.A.Checked != 4 || r.B.Solved != 2 || r.B.Checked != 3 || r.B.Unfinished != 1 || len(r.Differs) != 3 {
		t.Fatalf("report %+v", r)
	}
	var table bytes.Buffer
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	js, _ := json.MarshalIndent(r, "", "  ")
	golden(t, "ab_report.golden", table.Bytes())
	golden(t, "ab_report.json.golden", append(js, '\n'))

	// Unknown cost: no dollars per solved task, said so.
	a.Results["t1"] = Result{ID: "t1", Status: Solved, Steps: 3, CheckExit: &zero}
	table.Reset()
	CompareAB(tasks, a, b).WriteTable(&table)
	golden(t, "ab_report_unknown.golden", table.Bytes())
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n%s\nwant\n%s", name, got, want)
	}
}
