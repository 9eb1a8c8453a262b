//lint:file-ignore SA1019 the test server uses roots and logging, deprecated in the newest revision and still used by servers of 2025-11-25

// Package mcptest is an MCP server built with the official Go SDK, for
// tests: the test binaries of internal/mcp and internal/cli run it over
// stdio (when KindEnv is set) or serve it over streamable HTTP. Only tests
// import it.

package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// KindEnv, set, makes a test binary run Server(its value) over stdio.
const KindEnv = "HARNESS_MCP_TEST_SERVER"

// RunIfRequested runs the server and exits when KindEnv is set.
func RunIfRequested() {
	kind := os.Getenv(KindEnv)
	if kind == "" {
		return
	}
	if kind == HugeKind {
		if err := runHuge(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if err := Server(kind).Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

type textArg struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type sizeArg struct {
	N int `json:"n" jsonschema:"how many bytes"`
}

type pathArg struct {
	Path string `json:"path" jsonschema:"a file path"`
}

// Server is the Go test server: echo, env (what it was given), big output,
// a hang, a crash, malformed output, a file write and read (for the
// walls), a write without annotations (put) and a writer that goes on by
// itself (tick, for the modes), one that adds a tool (list_changed), a resource and a prompt.
// Kind "many" serves 50 tools with schemas the size of real ones.
func Server(kind string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "harness-test", Version: "1"}, &sdk.ServerOptions{Instructions: Instructions, CompletionHandler: complete,
		// Subscriptions are the SDK's to keep; these only accept them.
		SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
	})
	if kind == "many" {
		addMany(s, 50)
		return s
	}
	addBasic(s)
	addFileTools(s)
	addRuntime(s)
	addExtras(s)
	addFeatures(s)
	return s
}

// addBasic adds the tools that answer, misbehave or never answer.
func addBasic(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text back.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, r *sdk.CallToolRequest, in textArg) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "env", Description: "Report the server's environment."},
		func(ctx context.Context, r *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(os.Environ(), "\n")}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "big", Description: "Return n bytes of text."},
		func(ctx context.Context, r *sdk.CallToolRequest, in sizeArg) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", in.N)}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "hang", Description: "Never answer; record a cancellation in cancelled.txt of the working directory."},
		func(ctx context.Context, r *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			<-ctx.Done()
			os.WriteFile("cancelled.txt", []byte("cancelled"), 0o644)
			return nil, nil, ctx.Err()
		})
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Exit at once with code 3."},
		func(ctx context.Context, r *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "crash: on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "garbage", Description: "Write a line that is not JSON-RPC to stdout."},
		func(ctx context.Context, r *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			os.Stdout.WriteString("{this is not json\n")
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "after garbage"}}}, nil, nil
		})
}

// addFileTools adds the tools that touch files or start processes: what
// the walls and plan mode must hold.
func addFileTools(s *sdk.Server) {
	yes := true
	sdk.AddTool(s, &sdk.Tool{Name: "write", Description: "Write 'mcp' to path.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes}},
		func(ctx context.Context, r *sdk.CallToolRequest, in pathArg) (*sdk.CallToolResult, any, error) {
			if err := os.WriteFile(in.Path, []byte("mcp"), 0o644); err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "wrote " + in.Path}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "put", Description: "Write 'put' to path (no annotations: it may write)."},
		func(ctx context.Context, r *sdk.CallToolRequest, in pathArg) (*sdk.CallToolResult, any, error) {
			if err := os.WriteFile(in.Path, []byte("put"), 0o644); err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "put " + in.Path}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "tick", Description: "Append a line to path every 10 ms from now on, on the server's own (claims to be read-only).", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, r *sdk.CallToolRequest, in pathArg) (*sdk.CallToolResult, any, error) {
			go func() {
				for {
					if f, err := os.OpenFile(in.Path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
						f.WriteString("tick\n")
						f.Close()
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ticking into " + in.Path}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "read", Description: "Read path."},
		func(ctx context.Context, r *sdk.CallToolRequest, in pathArg) (*sdk.CallToolResult, any, error) {
			b, err := os.ReadFile(in.Path)
			if err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "spawn", Description: "Start a background process, in a session of its own, that outlives this call; text marks its command line."},
		func(ctx context.Context, r *sdk.CallToolRequest, in textArg) (*sdk.CallToolResult, any, error) {
			p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", "sleep 3600; echo " + in.Text}, &os.ProcAttr{Files: []*os.File{nil, nil, nil}, Sys: detached()})
			if err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(p.Pid)}}}, nil, nil
		})
}

// addRuntime adds the tools that change the server while it runs
// (list_changed, resource updates).
func addRuntime(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "grow", Description: "Add a tool named added."},
		func(ctx context.Context, r *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			sdk.AddTool(s, &sdk.Tool{Name: "added", Description: "A tool added at run time."},
				func(ctx context.Context, r *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "added works"}}}, nil, nil
				})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "grown"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "addprompt", Description: "Add a prompt named text."},
		func(ctx context.Context, r *sdk.CallToolRequest, in textArg) (*sdk.CallToolResult, any, error) {
			s.AddPrompt(&sdk.Prompt{Name: in.Text, Description: "A prompt added at run time"},
				func(ctx context.Context, r *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
					return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "added prompt " + in.Text}}}}, nil
				})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "prompt added"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "touch", Description: "Say the resource named by text changed."},
		func(ctx context.Context, r *sdk.CallToolRequest, in textArg) (*sdk.CallToolResult, any, error) {
			err := s.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: in.Text})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint("touched: ", err)}}}, nil, nil
		})
}

// addFeatures adds what is not a tool: a resource, a resource template,
// and prompts whose arguments complete (complete).
func addFeatures(s *sdk.Server) {
	s.AddResource(&sdk.Resource{URI: "test://readme", Name: "readme", MIMEType: "text/plain"},
		func(ctx context.Context, r *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://readme", Text: "the readme"}}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "review", Description: "Review a file", Arguments: []*sdk.PromptArgument{{Name: "file", Required: true}}},
		func(ctx context.Context, r *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Review " + r.Params.Arguments["file"] + " carefully."}}}}, nil
		})
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://notes/{name}", Name: "note", Description: "A note by its name", MIMEType: "text/plain"},
		func(ctx context.Context, r *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			name := strings.TrimPrefix(r.Params.URI, "test://notes/")
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain", Text: "the note called " + name}}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "greet", Description: "Greet someone", Arguments: []*sdk.PromptArgument{{Name: "lang", Required: true}, {Name: "name"}}},
		func(ctx context.Context, r *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Greet " + r.Params.Arguments["name"] + " in " + r.Params.Arguments["lang"] + "."}}}}, nil
		})
}

// complete answers completion/complete for the prompts' arguments:
// review's file from a fixed list, greet's lang, and greet's name by the
// lang already given (the request's context).
func complete(ctx context.Context, r *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	p := r.Params
	var all []string
	switch {
	case p.Ref.Name == "review" && p.Argument.Name == "file":
		all = []string{"main.go", "main_test.go", "my notes.txt"}
	case p.Ref.Name == "greet" && p.Argument.Name == "lang":
		all = []string{"en", "fr"}
	case p.Ref.Name == "greet" && p.Argument.Name == "name":
		all = []string{"Alice", "Albert"}
		if p.Context != nil && p.Context.Arguments["lang"] == "fr" {
			all = []string{"Amélie", "Anaïs"}
		}
	}
	out := []string{}
	for _, v := range all {
		if strings.HasPrefix(v, p.Argument.Value) {
			out = append(out, v)
		}
	}
	return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: out, Total: len(out)}}, nil
}

// Instructions are the Go server's instructions (InitializeResult).
const Instructions = "Call echo to check the connection. Never call hang unless asked."

// PNG is a 2x2 red PNG image, the picture the image tool returns.
func PNG() []byte {
	im := image.NewRGBA(image.Rect(0, 0, 2, 2))
	for x := range 2 {
		for y := range 2 {
			im.Set(x, y, color.RGBA{R: 255, A: 255})
		}
	}
	var b bytes.Buffer
	png.Encode(&b, im)
	return b.Bytes()
}

// addExtras adds the tools for the client's capabilities: an image, a
// log message, the roots the client declared, and a question to the user
// and a sampling request made during a call (ask, sample).
func addExtras(s *sdk.Server) {
	addAsk(s)
	sdk.AddTool(s, &sdk.Tool{Name: "image", Description: "Return a small PNG image and a caption."},
		func(ctx context.Context, r *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a red square"}, &sdk.ImageContent{Data: PNG(), MIMEType: "image/png"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "log", Description: "Send the text as a log message (notifications/message), then answer."},
		func(ctx context.Context, r *sdk.CallToolRequest, in textArg) (*sdk.CallToolResult, any, error) {
			err := r.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "warning", Logger: "test", Data: in.Text})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("logged: %v", err)}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "roots", Description: "List the roots the client gives."},
		func(ctx context.Context, r *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			var res *sdk.ListRootsResult
			if got, ok := r.Params.InputResponses["roots"].(*sdk.ListRootsResult); ok {
				res = got // the newest revision: the client's answer to the input request below
			} else {
				got, err := r.Session.ListRoots(ctx, nil)
				if err != nil {
					// On the newest revision a server asks within its result
					// (multi round-trip requests); the client calls again.
					return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"roots": &sdk.ListRootsParams{}}}, nil, nil
				}
				res = got
			}
			var out []string
			for _, root := range res.Roots {
				out = append(out, root.URI)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(out, "\n")}}}, nil, nil
		})
}

// addMany adds n tools whose descriptions and schemas are about the size
// of the reference servers' (a paragraph, four typed parameters).
func addMany(s *sdk.Server, n int) {
	for i := range n {
		schema := json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{
"path":{"type":"string","description":"Path of the item to operate on, relative to the workspace root or absolute inside it"},
"query":{"type":"string","description":"Free-text filter; items whose name or content contains it are kept"},
"limit":{"type":"integer","minimum":1,"maximum":1000,"description":"Maximum number of items to return (default 100)"},
"mode":{"type":"string","enum":["fast","thorough","dry-run"],"description":"How hard to look: fast skips content, thorough reads it, dry-run reports what would be done"}},
"required":["path"],"additionalProperties":false,"$comment":"tool %d"}`, i))
		s.AddTool(&sdk.Tool{Name: fmt.Sprintf("operation_%02d", i), InputSchema: schema,
			Description: fmt.Sprintf("Operation %d on workspace items: looks up the items under path that match the query, applies the operation, and returns a summary of each changed item with its new state. Use mode dry-run first when unsure; results are paginated by limit.", i)},
			func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done " + r.Params.Name}}}, nil
			})
	}
}

// AskSchema is the form the ask tool asks for: a required name, an
// integer with a default and bounds, an enum with titles and a default,
// a boolean with a default.
var AskSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":      map[string]any{"type": "string", "title": "Your name", "description": "as you like to be called"},
		"age":       map[string]any{"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
		"color":     map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "r", "title": "Red"}, map[string]any{"const": "g", "title": "Green"}}, "default": "g"},
		"subscribe": map[string]any{"type": "boolean", "default": true},
	},
	"required": []any{"name"},
}

type sampleArg struct {
	Text      string `json:"text" jsonschema:"the user message"`
	MaxTokens int64  `json:"maxTokens,omitempty" jsonschema:"maxTokens of the request (default 50)"`
	Tools     bool   `json:"tools,omitempty" jsonschema:"offer the model a tool"`
}

// addAsk adds ask (an elicitation with AskSchema during the call; the
// text is its message) and sample (a sampling request during the call).
// Both ask within the call's result on the newest revision (multi round
// trip, SEP-2322); the SDK sends them as requests to older clients.
func addAsk(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "ask", Description: "Ask the user to fill in a form; report the answer."},
		func(ctx context.Context, r *sdk.CallToolRequest, in textArg) (*sdk.CallToolResult, any, error) {
			res, ok := r.Params.InputResponses["form"].(*sdk.ElicitResult)
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"form": &sdk.ElicitParams{Message: in.Text, RequestedSchema: AskSchema}}}, nil, nil
			}
			content, _ := json.Marshal(res.Content)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "action: " + res.Action + " content: " + string(content)}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "sample", Description: "Ask the client's model to answer text; report the answer."},
		func(ctx context.Context, r *sdk.CallToolRequest, in sampleArg) (*sdk.CallToolResult, any, error) {
			res, ok := r.Params.InputResponses["llm"].(*sdk.CreateMessageWithToolsResult)
			if !ok {
				if in.MaxTokens == 0 {
					in.MaxTokens = 50
				}
				p := &sdk.CreateMessageWithToolsParams{SystemPrompt: "Be brief.", MaxTokens: in.MaxTokens,
					Messages: []*sdk.SamplingMessageV2{{Role: "user", Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}}}
				if in.Tools {
					p.Tools = []*sdk.Tool{{Name: "weather", InputSchema: map[string]any{"type": "object"}}}
				}
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"llm": p}}, nil, nil
			}
			var text []string
			for _, c := range res.Content {
				if t, ok := c.(*sdk.TextContent); ok {
					text = append(text, t.Text)
				}
			}
			out := fmt.Sprintf("model: %s stop: %s text: %s", res.Model, res.StopReason, strings.Join(text, ""))
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out}}}, nil, nil
		})
}
