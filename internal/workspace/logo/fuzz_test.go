package logo

import "testing"

func FuzzSanitizeSVG(f *testing.F) {
	for _, s := range []string{
		doc(``),
		doc(`<script>alert(1)</script><g onload="alert(1)"/>`),
		doc(`<a xlink:href="&#106;avascript:alert(1)"><rect style="fill:url(#local);stroke:url(https://evil/)"/></a>`),
		doc(`<foreignObject><html xmlns="http://www.w3.org/1999/xhtml"/></foreignObject><title>t<![CDATA[<x>]]></title>`),
		doc(`<filter id="f"><feImage href="x.png"/></filter><use href=" #local "/><text>a&#13;b</text>`),
		`<s:svg xmlns:s="http://www.w3.org/2000/svg"><s:g fill="rgb(1,2,3)" transform="matrix(1 0 0 1 0 0)"/></s:svg>`,
		`<!DOCTYPE svg [<!ENTITY a "b">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := SanitizeSVG(data)
		if err != nil {
			if out != nil {
				t.Errorf("output %q with error %v", out, err)
			}
			return
		}
		checkOutput(t, out)
	})
}
