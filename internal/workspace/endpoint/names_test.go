package endpoint

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNamesPluginBesideServer: a plugin's tools are named PLUGIN__TOOL
// like a server's; a plugin and a server of the same name that offer a
// tool of the same name both get the hashed form, each its own, so both
// are offered and neither takes the other's name; the names do not depend
// on the order of the tools.
func TestNamesPluginBesideServer(t *testing.T) {
	server := ref{server: 1, name: "github", tool: "create_issue"}
	plugin := ref{server: 1, plugin: true, name: "github", tool: "create_issue"}
	other := ref{server: 2, plugin: true, name: "notes", tool: "add"}
	serverOnly := ref{server: 1, name: "github", tool: "list_issues"}
	refs := []ref{server, plugin, other, serverOnly}
	got := Names(refs)
	if len(got) != len(refs) {
		t.Fatalf("%d names for %d tools: %v", len(got), len(refs), got)
	}
	if got["notes__add"] != other || got["github__list_issues"] != serverOnly {
		t.Errorf("plain names: %v", got)
	}
	if _, ok := got["github__create_issue"]; ok {
		t.Errorf("the clashing name is offered plain: %v", got)
	}
	var clashed []string
	for name, r := range got {
		if r == server || r == plugin {
			clashed = append(clashed, name)
			if !strings.HasPrefix(name, "github__create_issue_") || len(name) != len("github__create_issue_")+8 {
				t.Errorf("the clashing tool %+v is named %q, not in the hashed form", r, name)
			}
		}
	}
	if len(clashed) != 2 || clashed[0] == clashed[1] {
		t.Errorf("the server's and the plugin's tool: %v", clashed)
	}
	slices.Reverse(refs)
	if diff := cmp.Diff(got, Names(refs), cmp.AllowUnexported(ref{})); diff != "" {
		t.Errorf("the names depend on the order (-first +reversed):\n%s", diff)
	}
}
