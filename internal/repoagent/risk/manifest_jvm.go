package risk

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// readCatalog reads a Gradle version catalog: [versions] name = "1.2",
// [libraries] and [plugins] alias = "group:name:version" or a table.
func readCatalog(data []byte) (*facts, error) {
	doc, err := tomlTable(data)
	if err != nil {
		return nil, err
	}
	f := newFacts()
	for key, val := range doc {
		t, ok := val.(map[string]any)
		switch {
		case key == "bundles":
			f.set(key, canon(val), Dependencies, "changes the bundles")
			continue
		case key != "versions" && key != "libraries" && key != "plugins":
			f.set(key, canon(val), DependencySource, "changes ["+clip(key)+"], which the rules cannot read")
			continue
		case !ok:
			f.cannot(key, canon(val))
			continue
		}
		for alias, v := range t {
			catalogEntry(f, key, alias, v)
		}
	}
	return f, nil
}

func catalogEntry(f *facts, table, alias string, v any) {
	if s, ok := v.(string); ok {
		if table == "versions" {
			f.dep("version "+alias, s)
			return
		}
		parts := strings.Split(s, ":")
		if len(parts) < 2 {
			f.cannot(table+"."+alias, s)
			return
		}
		f.dep(strings.Join(parts[:len(parts)-1], ":"), parts[len(parts)-1])
		return
	}
	t, ok := v.(map[string]any)
	if !ok {
		f.cannot(table+"."+alias, canon(v))
		return
	}
	if table == "versions" {
		f.dep("version "+alias, canon(t))
		return
	}
	str := func(k string) string { s, _ := t[k].(string); return s }
	name := str("module") + str("id")
	if g, n := str("group"), str("name"); g != "" || n != "" {
		name = g + ":" + n
	}
	if name == "" {
		f.cannot(table+"."+alias, canon(t))
		return
	}
	req := canon(t["version"])
	if s, ok := t["version"].(string); ok {
		req = s
	} else if ref, ok := t["version"].(map[string]any); ok && len(ref) == 1 && ref["ref"] != nil {
		req = "ref " + canon(ref["ref"])
	}
	f.dep(name, req)
}

// ---- Maven ----

// xmlNode is an element of a parsed XML document.
type xmlNode struct {
	name     string
	attrs    []string
	text     string
	children []*xmlNode
}

// Bounds of an XML document the pom reader walks.
const (
	maxXMLDepth = 64
	maxXMLNodes = 1 << 17
)

const pomNamespace = "http://maven.apache.org/POM/4.0.0"

// parseXML reads an XML document strictly: no DOCTYPE (no entities of its
// own), no elements outside the POM's namespace, bounded depth and size.
func parseXML(data []byte) (*xmlNode, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var stack []*xmlNode
	var root *xmlNode
	nodes := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Space != "" && t.Name.Space != pomNamespace {
				return nil, errors.New("an element in another namespace")
			}
			if nodes++; nodes > maxXMLNodes || len(stack) >= maxXMLDepth {
				return nil, errors.New("too large or too deep")
			}
			n := &xmlNode{name: t.Name.Local}
			for _, a := range t.Attr {
				n.attrs = append(n.attrs, a.Name.Space+":"+a.Name.Local+"="+a.Value)
			}
			sort.Strings(n.attrs)
			if len(stack) == 0 {
				if root != nil {
					return nil, errors.New("more than one root element")
				}
				root = n
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(t)
			} else if len(bytes.TrimSpace(t)) > 0 {
				return nil, errors.New("text outside the root element")
			}
		case xml.Directive:
			return nil, errors.New("a DOCTYPE or other directive")
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}

// canon writes a node and its children canonically.
func (n *xmlNode) canon() string {
	var b strings.Builder
	var write func(n *xmlNode)
	write = func(n *xmlNode) {
		b.WriteString("<" + n.name + " " + strings.Join(n.attrs, " ") + ">" + strings.TrimSpace(n.text))
		for _, c := range n.children {
			write(c)
		}
		b.WriteString("</>")
	}
	write(n)
	return b.String()
}

func (n *xmlNode) child(name string) string {
	for _, c := range n.children {
		if c.name == name {
			return strings.TrimSpace(c.text)
		}
	}
	return ""
}

// pomBenign are a pom's metadata elements.
var pomBenign = []string{
	"modelVersion", "name", "description", "url", "inceptionYear", "organization", "licenses", "developers",
	"contributors", "mailingLists", "scm", "issueManagement", "ciManagement", "reporting",
}

// readPom reads a Maven pom.xml: its dependencies and the versions of its
// plugins are entries; its build, profiles, modules and properties other
// than versions are Verification (what mvn test runs and reads, such as
// skipTests).
func readPom(data []byte) (*facts, error) {
	root, err := parseXML(data)
	if err != nil {
		return nil, err
	}
	if root.name != "project" {
		return nil, errors.New("the root element is not project")
	}
	f := newFacts()
	for _, c := range root.children {
		switch c.name {
		case "groupId", "artifactId", "version", "packaging":
			f.set(c.name, c.canon(), ReleasePublish, "changes the project's "+c.name)
		case "parent":
			f.dep("parent "+c.child("groupId")+":"+c.child("artifactId"), c.child("version"))
			f.set("parent", c.canon(), Dependencies, "changes the parent")
		case "dependencies":
			pomDeps(f, "", c)
		case "dependencyManagement":
			for _, d := range c.children {
				if d.name == "dependencies" {
					pomDeps(f, "managed ", d)
				} else {
					f.cannot("dependencyManagement."+d.name, d.canon())
				}
			}
		case "properties":
			for _, p := range c.children {
				if strings.HasSuffix(p.name, ".version") {
					f.dep("property "+p.name, strings.TrimSpace(p.text))
				} else {
					f.set("property "+p.name, p.canon(), Verification, "changes the property "+clip(p.name)+", which the build and its tests read")
				}
			}
		case "build":
			f.set("build", pomBuild(f, c), Verification, "changes the build (plugins, test settings), which the checks run")
		case "profiles", "modules":
			f.set(c.name, c.canon(), Verification, "changes the "+c.name+", which decide what the build and its tests do")
		case "repositories", "pluginRepositories":
			f.set(c.name, c.canon(), DependencySource, "changes the "+c.name+", which redirect dependencies")
		case "distributionManagement":
			f.set(c.name, c.canon(), ReleasePublish, "changes where the project is published")
		default:
			if slices.Contains(pomBenign, c.name) {
				f.set(c.name, c.canon(), Dependencies, "changes the "+c.name)
			} else {
				f.set(c.name, c.canon(), DependencySource, "changes the pom's "+clip(c.name)+", which the rules cannot read")
			}
		}
	}
	return f, nil
}

// pomDeps records the dependencies of a <dependencies> element.
func pomDeps(f *facts, prefix string, deps *xmlNode) {
	for _, d := range deps.children {
		if d.name != "dependency" {
			f.cannot(prefix+"dependencies."+d.name, d.canon())
			continue
		}
		name := prefix + d.child("groupId") + ":" + d.child("artifactId")
		if t := d.child("type"); t != "" {
			name += ":" + t
		}
		if c := d.child("classifier"); c != "" {
			name += ":" + c
		}
		f.dep(name, d.child("version"))
		var rest []string
		for _, c := range d.children {
			switch c.name {
			case "groupId", "artifactId", "version", "type", "classifier":
			case "systemPath":
				f.set("systemPath "+name, c.canon(), DependencySource, "takes "+clip(name)+" from a file (systemPath)")
			default:
				rest = append(rest, c.canon())
			}
		}
		f.set("dependency "+name, strings.Join(rest, ""), Dependencies, "changes how "+clip(name)+" is used")
	}
}

// pomBuild records the versions of the build's plugins as entries and
// returns the canonical build without them.
func pomBuild(f *facts, build *xmlNode) string {
	var walk func(n *xmlNode) string
	walk = func(n *xmlNode) string {
		var b strings.Builder
		b.WriteString("<" + n.name + " " + strings.Join(n.attrs, " ") + ">" + strings.TrimSpace(n.text))
		for _, c := range n.children {
			if n.name == "plugin" && c.name == "version" {
				f.dep("plugin "+n.child("groupId")+":"+n.child("artifactId"), strings.TrimSpace(c.text))
				continue
			}
			b.WriteString(walk(c))
		}
		b.WriteString("</>")
		return b.String()
	}
	return walk(build)
}

// ---- Gradle ----

var (
	gradleCoordinate = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\w+\s*\(?\s*(?:platform\s*\(\s*|enforcedPlatform\s*\(\s*)?["']([^"'$]+)["']\s*\)?\s*\)?$`)
	})
	gradlePlugin = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:id\s*\(?\s*["']([^"']+)["']\s*\)?|kotlin\s*\(\s*["']([^"']+)["']\s*\))\s*version\s*\(?\s*["']([^"'$]+)["']\s*\)?$`)
	})
	gradlePluginID = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:id\s*\(?\s*["'][^"']+["']\s*\)?|kotlin\s*\(\s*["'][^"']+["']\s*\)|` + "`[\\w-]+`" + `|[\w-]+|alias\s*\(\s*libs\.[\w.]+\s*\))(?:\s+apply\s+false)?$`)
	})
	gradleCatalogRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\w+\s*\(?\s*(libs\.[\w.]+)\s*\)?$`) })
	gradleProjectRef = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\w+\s*\(?\s*project\s*\(\s*["'][^"']+["']\s*\)\s*\)?$`)
	})
)

// readGradle reads build.gradle and build.gradle.kts, which are programs
// gradle runs: the lines of dependencies { } blocks are entries, plugins { }
// entries too, repositories { } DependencySource, and every other line the
// build script, whose change is Verification.
func readGradle(data []byte) (*facts, error) {
	f := newFacts()
	var stack []string
	var script []string
	inComment := false
	for _, raw := range lines(data) {
		l := raw
		if inComment {
			end := strings.Index(l, "*/")
			if end < 0 {
				continue
			}
			l, inComment = l[end+2:], false
		}
		if i := strings.Index(l, "/*"); i >= 0 && !strings.Contains(l[i:], "*/") {
			l, inComment = l[:i], true
		}
		if i := strings.Index(l, "//"); i >= 0 && !strings.Contains(l[:i], "\"") && !strings.Contains(l[:i], "'") {
			l = l[:i]
		}
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		block := ""
		if len(stack) > 0 {
			block = stack[len(stack)-1]
		}
		opens, closes := strings.Count(t, "{"), strings.Count(t, "}")
		switch {
		case opens == 1 && closes == 0 && strings.HasSuffix(t, "{"):
			name := strings.TrimSpace(strings.TrimSuffix(t, "{"))
			if block == "repositories" {
				name = "repositories"
			}
			stack = append(stack, name)
			if name != "dependencies" && name != "plugins" && name != "repositories" {
				script = append(script, t)
			}
			continue
		case t == "}" && len(stack) > 0:
			if top := stack[len(stack)-1]; top != "dependencies" && top != "plugins" && top != "repositories" {
				script = append(script, t)
			}
			stack = stack[:len(stack)-1]
			continue
		}
		switch block {
		case "dependencies":
			gradleDep(f, t)
		case "plugins":
			if m := gradlePlugin().FindStringSubmatch(t); m != nil {
				f.dep("plugin "+m[1]+m[2], m[3])
			} else if gradlePluginID().MatchString(t) {
				f.set("plugin "+t, "", Verification, "applies or removes a Gradle plugin, which the build runs")
			} else {
				f.cannot("plugins", t)
			}
		case "repositories":
			f.set("repositories "+t, "", DependencySource, "changes the repositories, which redirect dependencies")
		default:
			script = append(script, t)
		}
	}
	f.set("script", strings.Join(script, "\n"), Verification, "changes the build script outside its dependencies, which gradle runs for the checks")
	return f, nil
}

func gradleDep(f *facts, t string) {
	if m := gradleCatalogRef().FindStringSubmatch(t); m != nil {
		f.dep(m[1], "")
		return
	}
	if gradleProjectRef().MatchString(t) {
		f.set("project dependency "+t, "", Dependencies, "changes a dependency on another project of the build")
		return
	}
	if m := gradleCoordinate().FindStringSubmatch(t); m != nil {
		parts := strings.Split(m[1], ":")
		if len(parts) == 3 || len(parts) == 4 {
			f.dep(parts[0]+":"+parts[1], parts[2])
			return
		}
	}
	f.cannot("dependencies", t)
}
