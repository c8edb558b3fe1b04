package workspace

import (
	"net/http"

	"github.com/zero-dev/zero/internal/workspace/auth"
)

// mcpEndpoint serves /mcp, the MCP streamable HTTP endpoint of the user's
// own agents (package endpoint), behind the same gate as every route: a
// bearer token of an owner or member. A browser session is refused
// (403 bearer_only): a page cannot call tools with the person's cookie.
func (w *Workspace) mcpEndpoint() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		c, err := w.check(writer, r)
		if err == nil && c.Kind != auth.Bearer {
			err = fail(http.StatusForbidden, "bearer_only", "/mcp is for MCP clients with a bearer token from the Tokens page; a browser session cannot use it")
			w.refused(r, c, "bearer_only")
		}
		if err != nil {
			ae := err.(*apiError)
			if ae.Status == http.StatusUnauthorized {
				rw.Header().Set("WWW-Authenticate", `Bearer realm="zero"`)
			}
			writeJSON(rw, ae.Status, map[string]*apiError{"error": ae})
			return
		}
		w.endpoint.ServeHTTP(rw, r, c)
	})
}
