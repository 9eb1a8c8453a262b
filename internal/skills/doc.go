// Package skills finds SKILL.md files: instructions for particular tasks that
// the model loads on demand. Each skill is a directory under
// <project>/.agents/skills/ or ~/.agents/skills/ holding a SKILL.md that
// starts with YAML front matter naming it and saying when to use it:
//
//	---
//	name: release
//	description: How to cut a release of this project.
//	---
//	(the instructions)
//
// Only names and descriptions go into the system prompt (they are short and
// static, so they stay in the cached prefix); the body is read by the
// read_skill tool when the model decides it needs it. A project skill wins
// over a user skill of the same name, so a repository can override a
// personal habit.
//
// SKILL.md files are read through an Opener (a session's is its sandbox
// policy's OpenRead: links resolved, secrets refused, regular files only,
// at most 256 KB), at discovery and again when read_skill loads one.
package skills
