// Package jsonc parses JSON into a syntax tree with byte offsets, recovering
// from half-typed documents, and converts between byte offsets and LSP
// positions (UTF-16).
//
// The parser is built for an editor: it never panics and never gives up.
// Problems in the input are reported as data in Document.Errors (at most
// 100 of them, plus a final "too many errors" entry), and the tree keeps
// everything that could be recovered, so that hover, completion and
// validation keep working on the rest of a file while one line is being
// typed. Running time is linear in the input size and nesting is limited to
// 1000 levels; deeper parts are skipped without recursion.
//
// Recovery, in short:
//   - a string ends at its closing quote or at the end of its line, so an
//     unterminated string does not swallow the rest of the file;
//   - a missing ',' or ':' is reported and parsing continues as if it were
//     there; a missing value leaves Member.Value nil;
//   - trailing commas, comments, duplicate keys, malformed numbers, bare
//     words, invalid UTF-8 and control characters are reported but kept or
//     skipped;
//   - a closing bracket of the wrong kind ends the inner container when an
//     enclosing container of that kind is open, and is skipped otherwise.
//
// The package has no package-level mutable state; a Document is not modified
// after Parse returns and may be read from several goroutines.
package jsonc
