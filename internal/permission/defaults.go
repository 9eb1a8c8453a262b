package permission

// defaultRules are the built-in rules, in the rule-file format. Read-only
// commands (those the peers allow too: Codex CLI's is_safe_command list)
// and test runners are allowed (the sandbox holds the walls),
// network clients, privilege and history-destroying git are denied, the
// options that turn a read-only command into one that runs or writes
// things ask. Everything else asks.
var defaultRules = []string{
	// Read-only commands.
	"allow bash ls *", "allow bash pwd *", "allow bash cat *", "allow bash head *",
	"allow bash tail *", "allow bash wc *", "allow bash grep *", "allow bash egrep *",
	"allow bash fgrep *", "allow bash rg *", "allow bash find *", "allow bash tree *",
	"allow bash file *", "allow bash which *", "allow bash echo *", "allow bash printf *",
	"allow bash true *", "allow bash false *", "allow bash : *", "allow bash read *", "allow bash test *", "allow bash [ *",
	"allow bash cd *", "allow bash stat *", "allow bash basename *", "allow bash dirname *",
	"allow bash realpath *", "allow bash diff *", "allow bash du *", "allow bash date *",
	"allow bash command -v *", "allow bash type *",
	"allow bash nl *", "allow bash tac *", "allow bash numfmt *", "allow bash base64 *",
	"allow bash printenv *", "allow bash cut *", "allow bash paste *", "allow bash rev *",
	"allow bash seq *", "allow bash tr *", "allow bash expr *", "allow bash id *",
	"allow bash uname *", "allow bash whoami *",
	// Read-only unless an option or operand writes or runs: the parts
	// that do are decided on their own (writes like write_file).
	"allow bash sed *", "allow bash sort *", "allow bash uniq *", "allow bash tee *",
	"allow bash git status *", "allow bash git diff *", "allow bash git log *",
	"allow bash git show *", "allow bash git ls-files *", "allow bash git blame *",
	"allow bash git rev-parse *", "allow bash git branch *",
	// Test runners.
	"allow bash go test *", "allow bash go vet *", "allow bash pytest *",
	"allow bash python -m pytest *", "allow bash python3 -m pytest *",
	"allow bash python -m unittest *", "allow bash python3 -m unittest *",
	"allow bash npm test *", "allow bash npm run test *", "allow bash yarn test *",
	"allow bash pnpm test *", "allow bash cargo test *", "allow bash make test *",
	"allow bash make check *",
	// Deleting whole trees is not reading. (Options that write files or
	// run programs are known from each tool's option grammar, options.go.)
	"ask bash find * -delete *",
	// Denied outright.
	"deny bash sudo *", "deny bash doas *", "deny bash su *",
	"deny bash curl *", "deny bash wget *",
	"deny bash git push *", "deny bash git reset * --hard *",
	"deny bash git clean * -*f* *", "deny bash git clean * --force *",
	// File tools: reading is allowed (deny-read paths are refused before
	// any rule); writing inside the walls asks.
	"allow read /**",
}
