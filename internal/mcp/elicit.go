package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Elicitation is a server's question to the user (elicitation/create in
// form mode): its message and the fields of the flat schema it asks
// for. The strings are the server's, unsanitised: whoever shows them
// passes them through termsafe.
type Elicitation struct {
	Server  string
	Message string
	Fields  []Field
}

// Field is one property of an elicitation's schema: a primitive
// (string, number, integer, boolean), a single-select enum (a string with
// Options) or a multi-select one (Type "array", with Options).
type Field struct {
	Name        string
	Title       string
	Description string
	Type        string   // string, number, integer, boolean or array
	Format      string   // a string's: email, uri, date, date-time
	Options     []Choice // an enum's values, in the schema's order
	Default     any      // the schema's default (SEP-1034), nil when none
	Required    bool
	// Min and Max bound a number's value, a string's length (in
	// characters) or an array's items; nil when the schema sets none.
	Min, Max *float64
}

// Choice is one value of an enum and the title it is shown with.
type Choice struct{ Value, Title string }

// ElicitAnswer is the user's answer: Action accept (with Content, the
// fields' values by name), decline or cancel.
type ElicitAnswer struct {
	Action  string
	Content map[string]any
}

// The actions of an elicitation's answer.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// Bounds of what a server's elicitation may ask: more fields than
// maxFields is not a form a person fills in, and a message is shown
// within maxElicitMessage bytes.
const (
	maxFields        = 32
	maxElicitMessage = 4096
)

// Label is the field's title, or its name when it has none.
func (f Field) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// DefaultText is the default as the user would type it ("" when none):
// a form shows it prefilled.
func (f Field) DefaultText() string {
	switch d := f.Default.(type) {
	case nil:
		return ""
	case string:
		return d
	case bool:
		return strconv.FormatBool(d)
	case float64:
		return strconv.FormatFloat(d, 'f', -1, 64)
	case []any:
		var parts []string
		for _, v := range d {
			parts = append(parts, fmt.Sprint(v))
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(f.Default)
}

// errEmpty is Parse's error for a required field left empty.
var errEmpty = errors.New("this field is required")

// Parse reads what the user typed for f into the value sent back: a
// number, a bool, an enum's value (typed as the value, its title or its
// number in the list), a list of them for a multi-select (comma
// separated). An empty answer is no value (nil) unless f is required.
func (f Field) Parse(text string) (any, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		if f.Required {
			return nil, errEmpty
		}
		return nil, nil
	}
	switch f.Type {
	case "boolean":
		switch strings.ToLower(text) {
		case "y", "yes", "true", "1":
			return true, nil
		case "n", "no", "false", "0":
			return false, nil
		}
		return nil, errors.New("answer yes or no")
	case "number", "integer":
		v, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, errors.New("type a number")
		}
		if f.Type == "integer" && v != math.Trunc(v) {
			return nil, errors.New("type a whole number")
		}
		if err := f.inRange(v, "the value"); err != nil {
			return nil, err
		}
		return v, nil // an integer too: JSON has one number type
	case "array":
		var out []any
		for _, part := range strings.Split(text, ",") {
			v, err := f.choice(strings.TrimSpace(part))
			if err != nil {
				return nil, err
			}
			if !slices.Contains(out, any(v)) {
				out = append(out, v)
			}
		}
		if err := f.inRange(float64(len(out)), "the number of choices"); err != nil {
			return nil, err
		}
		return out, nil
	}
	if len(f.Options) > 0 {
		return f.choice(text)
	}
	if err := f.inRange(float64(len([]rune(text))), "the length"); err != nil {
		return nil, err
	}
	return text, nil
}

// choice is the enum value text names: the value, its title, or its
// number in the list (1-based).
func (f Field) choice(text string) (string, error) {
	for _, c := range f.Options {
		if text == c.Value || strings.EqualFold(text, c.Title) {
			return c.Value, nil
		}
	}
	if n, err := strconv.Atoi(text); err == nil && n >= 1 && n <= len(f.Options) {
		return f.Options[n-1].Value, nil
	}
	var names []string
	for _, c := range f.Options {
		names = append(names, c.Value)
	}
	return "", fmt.Errorf("%q is not one of: %s", text, strings.Join(names, ", "))
}

func (f Field) inRange(v float64, what string) error {
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	if f.Min != nil && v < *f.Min {
		return fmt.Errorf("%s must be at least %s", what, num(*f.Min))
	}
	if f.Max != nil && v > *f.Max {
		return fmt.Errorf("%s must be at most %s", what, num(*f.Max))
	}
	return nil
}

// elicitSchema is the part of a requested schema harness reads: a flat
// object of primitive properties (the spec's restricted subset).
type elicitSchema struct {
	Type       string                  `json:"type"`
	Properties map[string]elicitPropJS `json:"properties"`
	Required   []string                `json:"required"`
}

type constTitle struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

type elicitPropJS struct {
	Type        string       `json:"type"`
	Title       string       `json:"title"`
	Description string       `json:"description"`
	Format      string       `json:"format"`
	Enum        []any        `json:"enum"`
	EnumNames   []string     `json:"enumNames"`
	OneOf       []constTitle `json:"oneOf"`
	AnyOf       []constTitle `json:"anyOf"`
	Default     any          `json:"default"`
	Minimum     *float64     `json:"minimum"`
	Maximum     *float64     `json:"maximum"`
	MinLength   *float64     `json:"minLength"`
	MaxLength   *float64     `json:"maxLength"`
	MinItems    *float64     `json:"minItems"`
	MaxItems    *float64     `json:"maxItems"`
	Items       *struct {
		Enum  []any        `json:"enum"`
		AnyOf []constTitle `json:"anyOf"`
		OneOf []constTitle `json:"oneOf"`
	} `json:"items"`
}

// parseElicitation reads a form-mode request into the fields a form
// shows: the required ones in the order the schema's "required" lists
// them, then the others by name (a JSON object's order does not survive
// the SDK's decoding).
func parseElicitation(server string, p *sdk.ElicitParams) (*Elicitation, error) {
	q := &Elicitation{Server: server, Message: p.Message}
	if len(q.Message) > maxElicitMessage {
		q.Message = cutUTF8(q.Message, maxElicitMessage) + "…"
	}
	if p.RequestedSchema == nil {
		return q, nil
	}
	raw, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return nil, fmt.Errorf("its requested schema: %w", err)
	}
	var s elicitSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("its requested schema is not a flat object of primitive fields: %w", err)
	}
	if len(s.Properties) > maxFields {
		return nil, fmt.Errorf("its form has %d fields; harness shows at most %d", len(s.Properties), maxFields)
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.SliceStable(names, func(i, j int) bool {
		ri, rj := slices.Index(s.Required, names[i]), slices.Index(s.Required, names[j])
		switch {
		case ri >= 0 && rj >= 0:
			return ri < rj
		case ri >= 0 || rj >= 0:
			return ri >= 0
		}
		return names[i] < names[j]
	})
	for _, n := range names {
		f, err := fieldOf(n, s.Properties[n], slices.Contains(s.Required, n))
		if err != nil {
			return nil, err
		}
		q.Fields = append(q.Fields, f)
	}
	return q, nil
}

func fieldOf(name string, p elicitPropJS, required bool) (Field, error) {
	f := Field{Name: name, Title: p.Title, Description: p.Description, Type: p.Type, Format: p.Format,
		Default: p.Default, Required: required}
	if f.Type == "" && (len(p.Enum) > 0 || len(p.OneOf) > 0) {
		f.Type = "string"
	}
	switch f.Type {
	case "string":
		f.Min, f.Max = p.MinLength, p.MaxLength
		f.Options = choices(p.Enum, p.EnumNames, p.OneOf, p.AnyOf)
	case "number", "integer":
		f.Min, f.Max = p.Minimum, p.Maximum
	case "boolean":
	case "array":
		if p.Items == nil {
			return Field{}, fmt.Errorf("its field %q is a list without the enum of its items: harness asks only for primitive fields", name)
		}
		f.Min, f.Max = p.MinItems, p.MaxItems
		f.Options = choices(p.Items.Enum, nil, p.Items.OneOf, p.Items.AnyOf)
		if len(f.Options) == 0 {
			return Field{}, fmt.Errorf("its field %q is a list without the enum of its items: harness asks only for primitive fields", name)
		}
	default:
		return Field{}, fmt.Errorf("its field %q is of type %q: harness asks only for strings, numbers, integers, booleans and enums", name, p.Type)
	}
	return f, nil
}

// choices are an enum's values with their titles: from enum (with the
// legacy enumNames), or from oneOf/anyOf's const and title.
func choices(enum []any, names []string, oneOf, anyOf []constTitle) []Choice {
	var out []Choice
	for i, v := range enum {
		c := Choice{Value: fmt.Sprint(v), Title: fmt.Sprint(v)}
		if i < len(names) {
			c.Title = names[i]
		}
		out = append(out, c)
	}
	for _, ct := range append(oneOf, anyOf...) {
		c := Choice{Value: fmt.Sprint(ct.Const), Title: ct.Title}
		if c.Title == "" {
			c.Title = c.Value
		}
		out = append(out, c)
	}
	return out
}

// elicit answers a server's elicitation/create through Options.Elicit.
// A URL-mode request is declined (harness declares form mode only); a
// schema harness cannot show as a form is an error to the server, and
// the user is told.
func (m *Manager) elicit(ctx context.Context, c *conn, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	p := req.Params
	if p == nil {
		return nil, errors.New("elicitation/create without params")
	}
	if p.Mode == "url" {
		m.tell(fmt.Sprintf("MCP server %s asked to open a URL (URL-mode elicitation), which harness does not support: declined", c.def.Name))
		return &sdk.ElicitResult{Action: ElicitDecline}, nil
	}
	q, err := parseElicitation(c.def.Name, p)
	if err != nil {
		m.tell(fmt.Sprintf("MCP server %s asked for input harness cannot show: %v", c.def.Name, err))
		return nil, fmt.Errorf("harness cannot show this form: %w", err)
	}
	ans, err := m.o.Elicit(ctx, q)
	if err != nil {
		return nil, err
	}
	switch ans.Action {
	case ElicitAccept:
		content := map[string]any{}
		for k, v := range ans.Content {
			if v != nil {
				content[k] = v
			}
		}
		// The SDK checks the content against the schema and fills in
		// the defaults of fields left out (SEP-1034).
		return &sdk.ElicitResult{Action: ElicitAccept, Content: content}, nil
	case ElicitDecline, ElicitCancel:
		return &sdk.ElicitResult{Action: ans.Action}, nil
	}
	return nil, fmt.Errorf("unknown elicitation action %q", ans.Action)
}

// tell is Options.Notify, when set.
func (m *Manager) tell(s string) {
	if m.o.Notify != nil {
		m.o.Notify(s)
	}
}
