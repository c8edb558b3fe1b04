package fetch

import (
	"strings"

	"golang.org/x/net/html/charset"
)

// decode turns a body into text by its charset, in the order the HTML
// standard has browsers follow (golang.org/x/net/html/charset): a byte order
// mark, then the Content-Type charset, then a <meta> declaration in the
// first 1024 bytes, then a guess. Every WHATWG encoding is known. Invalid
// sequences become U+FFFD and a leading byte order mark is dropped.
func decode(body []byte, contentType string) string {
	enc, _, _ := charset.DetermineEncoding(body, contentType)
	s := string(body)
	if out, err := enc.NewDecoder().Bytes(body); err == nil {
		s = string(out)
	}
	return strings.TrimPrefix(strings.ToValidUTF8(s, "\uFFFD"), "\uFEFF")
}
