package workspace

import (
	"fmt"
	"net/url"

	"github.com/zero-dev/zero/internal/guard/netguard"
)

// DefaultRegistryURL is the official MCP Registry.
const DefaultRegistryURL = "https://registry.modelcontextprotocol.io"

// CheckRegistryURL refuses a registry URL that is not https (or http to
// a loopback address), or that carries credentials, a query or a
// fragment.
func CheckRegistryURL(raw string) error {
	_, err := registryURL(raw)
	return err
}

func registryURL(raw string) (*url.URL, error) {
	u, err := netguard.Options{Schemes: netguard.HTTPSOrLoopbackHTTP}.CheckURL(raw)
	if err != nil {
		return nil, err
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return nil, fmt.Errorf("%q: want https://HOST[/PATH], without a query or fragment", raw)
	}
	return u, nil
}
