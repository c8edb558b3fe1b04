package graphstore

import (
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"sync"
)

// This file holds the change log's format. The log (FILE.zero-log) is a
// sequence of lines, each
//
//	CRC {"op":...}\n
//
// where CRC is the CRC-32C of the JSON, in 8 lower-case hex digits. The first
// line is {"op":"begin","format":1,"base":SUM}: SUM is the SHA-256 of the
// main file the log's changes apply to. Then come changes, one a line, as
// the mutations made them (only what they changed), and, just before a
// compaction renames a new main file into place, {"op":"compacted",
// "into":SUM} with the new main file's SHA-256.
//
// A last line without its newline is a write that a crash cut short: it was
// never acknowledged, and it is dropped. Any other line that does not read
// is an error that leaves the log as it is.

const (
	opBegin     = "begin"
	opCompacted = "compacted"
	logFormat   = 1
)

// crcTable is made on first use: making it builds crc32's Castagnoli
// tables, which every zero command would otherwise pay for at start-up.
var crcTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// appendFramed appends the log line for the JSON in payload.
func appendFramed(dst, payload []byte) []byte {
	dst = fmt.Appendf(dst, "%08x ", crc32.Checksum(payload, crcTable()))
	dst = append(dst, payload...)
	return append(dst, '\n')
}

func appendBegin(dst []byte, base string) []byte {
	return fmt.Appendf(dst, `{"op":%q,"format":%d,"base":%q}`, opBegin, logFormat, base)
}

func appendCompacted(dst []byte, into string) []byte {
	return fmt.Appendf(dst, `{"op":%q,"into":%q}`, opCompacted, into)
}

// appendRecordJSON appends r's JSON.
func appendRecordJSON(dst []byte, r *record) []byte {
	dst = append(dst, `{"op":"`...)
	dst = append(dst, r.op...)
	dst = append(dst, '"')
	strs := func(dst []byte, ss []string) []byte {
		dst = append(dst, '[')
		for i, s := range ss {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSONString(dst, s)
		}
		return append(dst, ']')
	}
	switch r.op {
	case opCreateEntities:
		dst = append(dst, `,"entities":[`...)
		for i := range r.entities {
			e := &r.entities[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"name":`...)
			dst = AppendJSONString(dst, e.Name)
			dst = append(dst, `,"entityType":`...)
			dst = AppendJSONString(dst, e.EntityType)
			dst = append(dst, `,"observations":`...)
			dst = strs(dst, e.Observations)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	case opCreateRelations, opDeleteRelations:
		dst = append(dst, `,"relations":[`...)
		for i, rel := range r.relations {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"from":`...)
			dst = AppendJSONString(dst, rel.From)
			dst = append(dst, `,"to":`...)
			dst = AppendJSONString(dst, rel.To)
			dst = append(dst, `,"relationType":`...)
			dst = AppendJSONString(dst, rel.RelationType)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	case opAddObservations, opDeleteObservations:
		dst = append(dst, `,"observations":[`...)
		for i, o := range r.obs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"entityName":`...)
			dst = AppendJSONString(dst, o.EntityName)
			dst = append(dst, `,"contents":`...)
			dst = strs(dst, o.Contents)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	case opDeleteEntities:
		dst = append(dst, `,"names":`...)
		dst = strs(dst, r.names)
	}
	return append(dst, '}')
}

// logLine is one line of the log, read.
type logLine struct {
	rec  record
	sum  string // begin: the base; compacted: the new main file
	line int
	off  int64
}

// parseLog reads the complete lines of data, a part of the log that starts
// at byte off, line lineNo. It returns them and the number of bytes they
// take; a last line without its newline is left out.
func parseLog(path string, data string, off int64, lineNo int) ([]logLine, int, error) {
	var out []logLine
	n := 0
	for n < len(data) {
		end := strings.IndexByte(data[n:], '\n')
		if end < 0 {
			break // cut short by a crash: never acknowledged
		}
		line := data[n : n+end]
		l, pos, err := parseLogLine(line)
		if err != nil {
			return nil, 0, &CorruptError{Path: path, Line: lineNo, Offset: off + int64(n+pos), Reason: err.Error()}
		}
		l.line, l.off = lineNo, off+int64(n)
		out = append(out, l)
		n += end + 1
		lineNo++
	}
	return out, n, nil
}

func parseLogLine(line string) (l logLine, pos int, err error) {
	if len(line) < 9 || line[8] != ' ' {
		return l, 0, errors.New("not a change log line (CRC and JSON)")
	}
	want, err := strconv.ParseUint(line[:8], 16, 32)
	if err != nil {
		return l, 0, errors.New("not a change log line (CRC and JSON)")
	}
	payload := line[9:]
	if crc32.Checksum([]byte(payload), crcTable()) != uint32(want) {
		return l, 0, errors.New("CRC mismatch")
	}
	sc := scanner{s: payload}
	r := &l.rec
	format := -1
	err = sc.members(func(key string, _ int) error {
		var err error
		switch key {
		case "op":
			r.op, err = sc.str()
		case "format":
			start := sc.i
			if err = sc.number(); err == nil {
				format, err = strconv.Atoi(payload[start:sc.i])
			}
		case "base", "into":
			l.sum, err = sc.str()
		case "entities":
			err = sc.array(func() error {
				var e Entity
				err := sc.members(func(key string, _ int) error {
					var err error
					switch key {
					case "name":
						e.Name, err = sc.str()
					case "entityType":
						e.EntityType, err = sc.str()
					case "observations":
						e.Observations, err = sc.strList()
					default:
						err = sc.fail("unknown member %q", key)
					}
					return err
				})
				if e.Observations == nil {
					e.Observations = []string{}
				}
				r.entities = append(r.entities, e)
				return err
			})
		case "relations":
			err = sc.array(func() error {
				var rel Relation
				err := sc.members(func(key string, _ int) error {
					var err error
					switch key {
					case "from":
						rel.From, err = sc.str()
					case "to":
						rel.To, err = sc.str()
					case "relationType":
						rel.RelationType, err = sc.str()
					default:
						err = sc.fail("unknown member %q", key)
					}
					return err
				})
				r.relations = append(r.relations, rel)
				return err
			})
		case "observations":
			err = sc.array(func() error {
				var o Observations
				err := sc.members(func(key string, _ int) error {
					var err error
					switch key {
					case "entityName":
						o.EntityName, err = sc.str()
					case "contents":
						o.Contents, err = sc.strList()
					default:
						err = sc.fail("unknown member %q", key)
					}
					return err
				})
				r.obs = append(r.obs, o)
				return err
			})
		case "names":
			r.names, err = sc.strList()
		default:
			err = sc.fail("unknown member %q", key)
		}
		return err
	})
	if err == nil {
		err = sc.end()
	}
	if err != nil {
		return l, 9 + sc.i, err
	}
	switch r.op {
	case opBegin:
		if format != logFormat {
			return l, 9, fmt.Errorf("change log format %d, want %d", format, logFormat)
		}
	case opCompacted, opCreateEntities, opCreateRelations, opAddObservations,
		opDeleteEntities, opDeleteObservations, opDeleteRelations:
	default:
		return l, 9, fmt.Errorf("unknown change %q", r.op)
	}
	return l, 0, nil
}

// array reads an array, calling f with sc.i at each element; f must read
// over it.
func (sc *scanner) array(f func() error) error {
	if err := sc.expect('['); err != nil {
		return err
	}
	if sc.peek() == ']' {
		sc.i++
		return nil
	}
	for {
		if err := f(); err != nil {
			return err
		}
		switch sc.peek() {
		case ',':
			sc.i++
		case ']':
			sc.i++
			return nil
		default:
			return sc.unexpected("',' or ']'")
		}
	}
}

// strList reads an array that must hold only strings.
func (sc *scanner) strList() ([]string, error) {
	ss, ok, err := sc.strs()
	if err == nil && !ok {
		err = sc.unexpected("an array of strings")
	}
	return ss, err
}
