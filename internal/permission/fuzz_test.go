package permission

import "testing"

// FuzzDecide feeds arbitrary shell text to the gate: it must decide (never
// panic), decide the same way twice, and give every refusal a reason for
// the model. As a plain test it runs the seeds only.
func FuzzDecide(f *testing.F) {
	for _, s := range []string{
		"ls -la", "go test ./... 2>&1 | tail -n 20", "echo $(curl x)", "eval \"$(printf 'cu''rl')\" x",
		"find . -exec sh -c 'rm -rf /' \\;", "cat <<EOF > /etc/x\nhi\nEOF", "a=$IFS; c${a}url x",
		"xargs -I{} sh -c 'echo {}' < f", "alias ls='curl x'; ls", "f() { curl x; }; f", "bash -c \"$(cat s)\"",
		"git -C d push", "tee -a ~/.bashrc", "((x++)); [[ -f a ]] && echo y", "echo `id`", "<(curl x)",
	} {
		f.Add(s)
	}
	g := testGate(f, nil)
	f.Fuzz(func(t *testing.T, cmd string) {
		d := g.Decide(Request{Tool: "bash", Command: cmd})
		if d.Verdict < Allow || d.Verdict > Deny {
			t.Fatalf("verdict %v for %q", d.Verdict, cmd)
		}
		if d.Verdict != Allow && d.Rule == "" {
			t.Fatalf("no rule for %v of %q", d.Verdict, cmd)
		}
		if again := g.Decide(Request{Tool: "bash", Command: cmd}); again.Verdict != d.Verdict || again.Rule != d.Rule {
			t.Fatalf("%q decided %v (%s), then %v (%s)", cmd, d.Verdict, d.Rule, again.Verdict, again.Rule)
		}
	})
}
