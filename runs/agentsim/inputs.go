// Tool inputs: each simulated tool's input schema, and the validation
// Claude Code runs on a tool call before anything else — the text the model
// sees, the zod issues the stream's tool_use_result carries, and the extra
// note for a deferred tool called before ToolSearch loaded it.

package agentsim

import (
	"fmt"
	"slices"
	"strings"
)

// field describes one tool input parameter.
type field struct {
	name     string
	kind     string // the JSON type: string, boolean, number, object, or array (of strings)
	required bool
	enum     []string // for status: one of these, or "deleted"
}

// statusValues are TaskUpdate's status enum (besides "deleted").
func statusValues() []string { return []string{statusPending, statusInProgress, statusCompleted} }

// inputFields is a tool's input schema, in Claude Code's property order.
func inputFields(tool string) []field {
	switch tool {
	case "TaskCreate":
		return []field{{name: "subject", kind: "string", required: true}, {name: "description", kind: "string", required: true},
			{name: "activeForm", kind: "string"}, {name: "metadata", kind: "object"}}
	case "TaskGet":
		return []field{{name: "taskId", kind: "string", required: true}}
	case "TaskUpdate":
		return []field{{name: "taskId", kind: "string", required: true}, {name: "subject", kind: "string"},
			{name: "description", kind: "string"}, {name: "activeForm", kind: "string"},
			{name: "status", kind: "string", enum: statusValues()},
			{name: "addBlocks", kind: "array"}, {name: "addBlockedBy", kind: "array"},
			{name: "owner", kind: "string"}, {name: "metadata", kind: "object"}}
	case "Read":
		return []field{{name: "file_path", kind: "string", required: true}, {name: "offset", kind: "number"},
			{name: "limit", kind: "number"}}
	case "Write":
		return []field{{name: "file_path", kind: "string", required: true}, {name: "content", kind: "string", required: true}}
	case "Edit":
		return []field{{name: "file_path", kind: "string", required: true}, {name: "old_string", kind: "string", required: true},
			{name: "new_string", kind: "string", required: true}, {name: "replace_all", kind: "boolean"}}
	case "Bash":
		return []field{{name: "command", kind: "string", required: true}, {name: "timeout", kind: "number"},
			{name: "description", kind: "string"}, {name: "run_in_background", kind: "boolean"},
			{name: "dangerouslyDisableSandbox", kind: "boolean"}, {name: "allowed_domains", kind: "array"}}
	case "ToolSearch":
		return []field{{name: "query", kind: "string", required: true}, {name: "max_results", kind: "number"}}
	}
	return nil
}

// inputIssues validates a call's input against the tool's schema. It returns
// the lines the model sees and the zod issues of the structured result, in
// zod's order: the schema's properties, then unknown keys.
func inputIssues(tool string, in *obj) (lines []string, issues []any) {
	fields := inputFields(tool)
	known := map[string]bool{}
	typeIssue := func(path []any, want, got string) *obj {
		return newObj("expected", want, "code", "invalid_type", "path", path,
			"message", fmt.Sprintf("Invalid input: expected %s, received %s", want, got))
	}
	for _, f := range fields {
		known[f.name] = true
		v, ok := in.get(f.name)
		switch got := jsonType(v); {
		case !ok:
			if f.required {
				lines = append(lines, fmt.Sprintf("The required parameter `%s` is missing", f.name))
				issues = append(issues, typeIssue([]any{f.name}, f.kind, "undefined"))
			}
		case got != f.kind:
			lines = append(lines, fmt.Sprintf("The parameter `%s` type is expected as `%s` but provided as `%s`", f.name, f.kind, got))
			issues = append(issues, typeIssue([]any{f.name}, f.kind, got))
		case f.kind == "array":
			for i, e := range v.([]any) {
				if et := jsonType(e); et != "string" {
					lines = append(lines, fmt.Sprintf("The parameter `%s.%d` type is expected as `string` but provided as `%s`", f.name, i, et))
					issues = append(issues, typeIssue([]any{f.name, i}, "string", et))
				}
			}
		case f.enum != nil && !slices.Contains(f.enum, v.(string)) && v != "deleted":
			lines = append(lines, fmt.Sprintf("The parameter `%s` matches none of the accepted forms", f.name))
			quoted := make([]string, len(f.enum))
			for i, e := range f.enum {
				quoted[i] = `"` + e + `"`
			}
			issues = append(issues, newObj("code", "invalid_union", "errors", []any{
				[]any{newObj("code", "invalid_value", "values", f.enum, "path", []any{},
					"message", "Invalid option: expected one of "+strings.Join(quoted, "|"))},
				[]any{newObj("code", "invalid_value", "values", []string{"deleted"}, "path", []any{},
					"message", `Invalid input: expected "deleted"`)},
			}, "path", []any{f.name}, "message", "Invalid input"))
		}
	}
	var unknown []string
	for _, k := range in.keys {
		if !known[k] {
			unknown = append(unknown, k)
			lines = append(lines, fmt.Sprintf("An unexpected parameter `%s` was provided", k))
		}
	}
	if len(unknown) > 0 {
		msg := `Unrecognized key: "` + unknown[0] + `"`
		if len(unknown) > 1 {
			msg = `Unrecognized keys: "` + strings.Join(unknown, `", "`) + `"`
		}
		issues = append(issues, newObj("code", "unrecognized_keys", "keys", unknown, "path", []any{}, "message", msg))
	}
	return lines, issues
}

// validationError is the failed call for invalid input, or ok. A deferred
// tool that ToolSearch has not loaded gets Claude Code's note telling the
// model to load it, with the schema it would have seen.
func (s *session) validationError(tool string, in *obj) (toolResult, bool) {
	lines, issues := inputIssues(tool, in)
	if len(lines) == 0 {
		return toolResult{}, true
	}
	noun := "issue"
	if len(lines) > 1 {
		noun = "issues"
	}
	text := fmt.Sprintf("InputValidationError: %s failed due to the following %s:\n%s", tool, noun, strings.Join(lines, "\n"))
	if s.deferred[tool] {
		text += "\n\nThis tool's schema was not sent to the API — it was not in the discovered-tool set derived from message history. " +
			"Without the schema in your prompt, typed parameters (arrays, numbers, booleans) get emitted as strings and the client-side parser rejects them. " +
			`Load the tool first: call ToolSearch with query "select:` + tool + `", then retry this call. ` +
			"For reference, this tool's input schema is: " + inputSchema(tool)
	}
	return toolResult{structured: "InputValidationError: " + stringify(issues, "  "),
		text: "<tool_use_error>" + text + "</tool_use_error>", isError: true}, false
}

// inputSchema renders a tool's input schema as the JSON Schema Claude Code
// sends (without the descriptions).
func inputSchema(tool string) string {
	props := newObj()
	var required []string
	for _, f := range inputFields(tool) {
		var p *obj
		switch {
		case f.enum != nil:
			p = newObj("anyOf", []any{newObj("type", "string", "enum", f.enum), newObj("type", "string", "const", "deleted")})
		case f.kind == "array":
			p = newObj("type", "array", "items", newObj("type", "string"))
		case f.kind == "object":
			p = newObj("type", "object", "propertyNames", newObj("type", "string"), "additionalProperties", newObj())
		default:
			p = newObj("type", f.kind)
		}
		props.set(f.name, p)
		if f.required {
			required = append(required, f.name)
		}
	}
	schema := newObj("$schema", "https://json-schema.org/draft/2020-12/schema", "type", "object", "properties", props)
	if required != nil {
		schema.set("required", required)
	}
	schema.set("additionalProperties", false)
	return stringify(schema, "")
}

// jsonType names a decoded JSON value's type as a JSON Schema does.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, int:
		return "number"
	case string:
		return "string"
	case *obj:
		return "object"
	case []any:
		return "array"
	}
	return "unknown"
}
