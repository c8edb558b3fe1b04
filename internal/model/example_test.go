package model_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/zero-dev/zero/internal/model"
)

// The example's server plays a model that reads a file once, then answers.
func ExampleClient_Converse() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"role":"tool"`) {
			io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[
				{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"NOTES\"}"}}]},
				"finish_reason":"tool_calls"}]}`)
			return
		}
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"The notes say: buy milk."},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()

	env := map[string]string{"ZERO_MODEL_BASE_URL": srv.URL + "/v1", "ZERO_MODEL": "local-model"}
	cfg, err := model.FromEnv("ZERO", func(name string) string { return env[name] })
	if err != nil {
		fmt.Println(err)
		return
	}
	c := model.New(cfg, nil)
	readFile := func(ctx context.Context, args json.RawMessage) (string, error) {
		var a struct{ Path string }
		if err := json.Unmarshal(args, &a); err != nil {
			return "", err
		}
		return "buy milk", nil
	}
	req := model.Request{
		Messages: []model.Message{{Role: model.RoleUser, Content: "What do my notes say?"}},
		Tools: []model.Tool{{Type: "function", Function: model.FunctionDef{
			Name:       "read_file",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		}}},
	}
	conv, final, err := c.Converse(context.Background(), req, map[string]model.ToolFunc{"read_file": readFile}, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range conv {
		fmt.Printf("%s: %q %d\n", m.Role, m.Content, len(m.ToolCalls))
	}
	fmt.Println(final.Content)
	// Output:
	// user: "What do my notes say?" 0
	// assistant: "" 1
	// tool: "buy milk" 0
	// assistant: "The notes say: buy milk." 0
	// The notes say: buy milk.
}
