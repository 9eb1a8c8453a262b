package permission

// defaultRules are the built-in rules, in the rule-file format. Read-only
// commands and test runners are allowed (the sandbox holds the walls),
// network clients, privilege and history-destroying git are denied, the
// options that turn a read-only command into one that runs or writes
// things ask. Everything else asks.
var defaultRules = []string{
	// Read-only commands.
	"allow bash ls *", "allow bash pwd *", "allow bash cat *", "allow bash head *",
	"allow bash tail *", "allow bash wc *", "allow bash grep *", "allow bash egrep *",
	"allow bash fgrep *", "allow bash rg *", "allow bash find *", "allow bash tree *",
	"allow bash file *", "allow bash which *", "allow bash echo *", "allow bash printf *",
	"allow bash true *", "allow bash false *", "allow bash test *", "allow bash [ *",
	"allow bash cd *", "allow bash stat *", "allow bash basename *", "allow bash dirname *",
	"allow bash realpath *", "allow bash diff *", "allow bash du *", "allow bash date *",
	"allow bash command -v *", "allow bash type *",
	"allow bash git status *", "allow bash git diff *", "allow bash git log *",
	"allow bash git show *", "allow bash git ls-files *", "allow bash git blame *",
	"allow bash git rev-parse *",
	// Test runners.
	"allow bash go test *", "allow bash go vet *", "allow bash pytest *",
	"allow bash python -m pytest *", "allow bash python3 -m pytest *",
	"allow bash npm test *", "allow bash npm run test *", "allow bash yarn test *",
	"allow bash pnpm test *", "allow bash cargo test *", "allow bash make test *",
	"allow bash make check *",
	// Options that make a read-only command run or write something.
	"ask bash rg * --pre *", "ask bash rg * --pre=* *",
	"ask bash tree * -o *",
	"ask bash git * --output *", "ask bash git * --output=* *",
	"ask bash git * --ext-diff *",
	"ask bash find * -delete *",
	"ask bash printf * -v *", "ask bash test * -v *", "ask bash [ * -v *",
	// Denied outright.
	"deny bash sudo *", "deny bash doas *", "deny bash su *",
	"deny bash curl *", "deny bash wget *",
	"deny bash git push *", "deny bash git reset * --hard *",
	"deny bash git clean * -*f* *", "deny bash git clean * --force *",
	// File tools: reading is allowed (deny-read paths are refused before
	// any rule); writing inside the walls asks.
	"allow read /**",
}
