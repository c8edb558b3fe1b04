package filesystem

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpserver"
)

// The tools keep the reference server's names, arguments and output shapes.
// Each input schema is written out by hand and matches the argument struct
// its handler decodes into; a test checks that they agree.

const (
	pathProp     = `"path":{"type":"string","minLength":1,"description":"A path inside an allowed directory; a relative path is taken from the first allowed directory."}`
	excludesProp = `"excludePatterns":{"type":"array","items":{"type":"string"},"default":[],"description":"Glob patterns (minimatch syntax) of paths to leave out."}`
)

func objectSchema(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	if required == nil {
		req = []byte("[]")
	}
	return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `,"additionalProperties":false}`)
}

var (
	pathSchema     = objectSchema(pathProp, "path")
	readTextSchema = objectSchema(pathProp+
		`,"head":{"type":"integer","minimum":1,"description":"If given, return only the first N lines."}`+
		`,"tail":{"type":"integer","minimum":1,"description":"If given, return only the last N lines."}`, "path")
	readMultipleSchema = objectSchema(`"paths":{"type":"array","minItems":1,"items":{"type":"string","minLength":1},"description":"Paths of the files to read, each inside an allowed directory."}`, "paths")
	writeSchema        = objectSchema(pathProp+`,"content":{"type":"string","description":"The whole new content of the file."}`, "path", "content")
	editSchema         = objectSchema(pathProp+
		`,"edits":{"type":"array","minItems":1,"items":{"type":"object","properties":{`+
		`"oldText":{"type":"string","minLength":1,"description":"Text to search for; it must match exactly, or line by line ignoring leading and trailing whitespace."},`+
		`"newText":{"type":"string","description":"Text to replace it with."}},"required":["oldText","newText"],"additionalProperties":false}}`+
		`,"dryRun":{"type":"boolean","default":false,"description":"Return the diff without writing the file."}`, "path", "edits")
	listSizesSchema = objectSchema(pathProp+`,"sortBy":{"type":"string","enum":["name","size"],"default":"name","description":"Sort entries by name or by size, largest first."}`, "path")
	treeSchema      = objectSchema(pathProp+","+excludesProp, "path")
	moveSchema      = objectSchema(`"source":{"type":"string","minLength":1},"destination":{"type":"string","minLength":1}`, "source", "destination")
	searchSchema    = objectSchema(pathProp+`,"pattern":{"type":"string","minLength":1,"description":"A glob pattern (minimatch syntax) matched against paths relative to path, such as *.go or **/*.go."},`+excludesProp, "path", "pattern")
	emptySchema     = objectSchema("")

	mediaOutputSchema = json.RawMessage(`{"type":"object","properties":{"content":{"type":"array","items":{"anyOf":[` +
		`{"type":"object","properties":{"type":{"type":"string","enum":["image","audio"]},"data":{"type":"string"},"mimeType":{"type":"string"}},"required":["type","data","mimeType"],"additionalProperties":false},` +
		`{"type":"object","properties":{"type":{"type":"string","const":"resource"},"resource":{"type":"object","properties":{"uri":{"type":"string"},"mimeType":{"type":"string"},"blob":{"type":"string"}},"required":["uri","blob"],"additionalProperties":false}},"required":["type","resource"],"additionalProperties":false}` +
		`]}}},"required":["content"],"additionalProperties":false}`)
)

// Annotations. Every tool works on local files only (a closed world).
func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)}
}

func writes(title string, destructive, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, DestructiveHint: ptr(destructive), IdempotentHint: idempotent, OpenWorldHint: ptr(false)}
}

func ptr[T any](v T) *T { return &v }

const onlyAllowed = " Only works within allowed directories."

func (s *server) addTools(srv *mcp.Server) {
	text := mcpserver.TextOutputSchema
	tool := func(name, title, desc string, in, out json.RawMessage, ann *mcp.ToolAnnotations) *mcp.Tool {
		return &mcp.Tool{Name: name, Title: title, Description: desc, InputSchema: in, OutputSchema: out, Annotations: ann}
	}
	mcpserver.AddTool(srv, tool("read_file", "Read File (Deprecated)",
		"Read the complete contents of a file as text. DEPRECATED: use read_text_file instead."+onlyAllowed,
		readTextSchema, text, readOnly("Read File (Deprecated)")), s.readTextFile)
	mcpserver.AddTool(srv, tool("read_text_file", "Read Text File",
		"Read the complete contents of a file as text (UTF-8). Use head to read only the first N lines, or tail "+
			"to read only the last N lines. Whole-file reads are limited to 64 MiB; named pipes and devices are refused."+onlyAllowed,
		readTextSchema, text, readOnly("Read Text File")), s.readTextFile)
	mcpserver.AddTool(srv, tool("read_media_file", "Read Media File",
		"Read a file and return it base64-encoded with its MIME type: images and audio as image or audio content, "+
			"any other file as an embedded resource."+onlyAllowed,
		pathSchema, mediaOutputSchema, readOnly("Read Media File")), s.readMediaFile)
	mcpserver.AddTool(srv, tool("read_multiple_files", "Read Multiple Files",
		"Read several files at once. Each file's content is returned after its path; a file that cannot be read "+
			"gets an error line and does not stop the others."+onlyAllowed,
		readMultipleSchema, text, readOnly("Read Multiple Files")), s.readMultipleFiles)
	mcpserver.AddTool(srv, tool("write_file", "Write File",
		"Create a new file or completely overwrite an existing one. The new content is written to a temporary file "+
			"that then replaces the target in one step."+onlyAllowed,
		writeSchema, text, writes("Write File", true, true)), s.writeFile)
	mcpserver.AddTool(srv, tool("edit_file", "Edit File",
		"Make text edits to a file: each edit replaces the first match of oldText with newText. Returns a unified "+
			"diff of the change; with dryRun the file is left as it is."+onlyAllowed,
		editSchema, text, writes("Edit File", true, false)), s.editFile)
	mcpserver.AddTool(srv, tool("create_directory", "Create Directory",
		"Create a directory, with any missing parents. Succeeds if it already exists."+onlyAllowed,
		pathSchema, text, writes("Create Directory", false, true)), s.createDirectory)
	mcpserver.AddTool(srv, tool("list_directory", "List Directory",
		"List the entries of a directory, each prefixed with [DIR] or [FILE]. Symbolic links that lead outside the "+
			"allowed directories are not listed."+onlyAllowed,
		pathSchema, text, readOnly("List Directory")), s.listDirectory)
	mcpserver.AddTool(srv, tool("list_directory_with_sizes", "List Directory with Sizes",
		"List the entries of a directory with their sizes, prefixed with [DIR] or [FILE], and a summary. Symbolic "+
			"links that lead outside the allowed directories are not listed."+onlyAllowed,
		listSizesSchema, text, readOnly("List Directory with Sizes")), s.listDirectoryWithSizes)
	mcpserver.AddTool(srv, tool("directory_tree", "Directory Tree",
		"Get a recursive tree of files and directories as JSON (2-space indent). Each entry has name and type "+
			"(file or directory); directories have a children array. Symbolic links are listed as files and not "+
			"followed; those leading outside the allowed directories are left out."+onlyAllowed,
		treeSchema, text, readOnly("Directory Tree")), s.directoryTree)
	mcpserver.AddTool(srv, tool("move_file", "Move File",
		"Move or rename a file or directory. Fails if the destination exists."+onlyAllowed,
		moveSchema, text, writes("Move File", true, false)), s.moveFile)
	mcpserver.AddTool(srv, tool("search_files", "Search Files",
		"Recursively find files and directories whose path relative to path matches a glob pattern: *.ext matches "+
			"in path itself, **/*.ext at any depth. Returns full paths. Symbolic links are not followed."+onlyAllowed,
		searchSchema, text, readOnly("Search Files")), s.searchFiles)
	mcpserver.AddTool(srv, tool("get_file_info", "Get File Info",
		"Get a file's or directory's size, times, type and permissions."+onlyAllowed,
		pathSchema, text, readOnly("Get File Info")), s.getFileInfo)
	mcpserver.AddTool(srv, tool("list_allowed_directories", "List Allowed Directories",
		"List the directories this server may access in this session. Everything below them is accessible too.",
		emptySchema, text, readOnly("List Allowed Directories")), s.listAllowedDirectories)
}
