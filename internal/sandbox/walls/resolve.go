package walls

// Resolve returns path made absolute (against the working directory) with
// every symlink resolved the way the kernel would follow it, including a
// dangling final link; parts that cannot be resolved are kept lexically.
// CheckRead and CheckWrite decide on this form, and callers that match
// their own rules against a path (the permission gate) use it so that a
// link cannot borrow another path's grant.
func Resolve(path string) string { return resolve(path) }
