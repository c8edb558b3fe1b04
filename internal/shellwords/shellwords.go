// Package shellwords reads a command line a person pasted (untrusted text)
// into the words a POSIX shell would split it into, and refuses every line
// on which a shell would do more than split words. It owns that reading:
// quotes and backslashes are read as a shell reads them, and nothing is
// ever expanded or run. A variable, a command substitution, a glob, a
// tilde, a comment, a brace, an operator (a pipe, a list, a redirection, a
// subshell) or a leading NAME=value is refused with a message saying what
// was found and where, rather than guessed at.
//
// Split(`npx -y "@scope/pkg" '/tmp/my files'`) is
// []string{"npx", "-y", "@scope/pkg", "/tmp/my files"}.
package shellwords

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxWords bounds the words of one line.
const MaxWords = 1000

// Why a line is refused; an *Error wraps one.
var (
	ErrEmpty      = errors.New("no word")
	ErrOperator   = errors.New("a shell operator")
	ErrExpansion  = errors.New("a shell expansion")
	ErrUnclosed   = errors.New("an unclosed quote or escape")
	ErrAssignment = errors.New("a variable assignment")
	ErrNUL        = errors.New("a NUL byte")
	ErrTooMany    = errors.New("too many words")
)

// An Error says why a line is not split: what was found, at which
// character (counted from 1), and what to do.
type Error struct {
	Kind   error  // one of the Err values
	Found  string // what was found, as typed
	At     int    // its character's position, from 1; 0 for the line as a whole
	Advice string
}

func (e *Error) Error() string {
	where := ""
	if e.At > 0 {
		where = fmt.Sprintf(" at character %d", e.At)
	}
	found := ""
	if e.Found != "" {
		found = fmt.Sprintf(" %q", e.Found)
	}
	return fmt.Sprintf("the line holds %s%s%s: %s", e.Kind, found, where, e.Advice)
}

func (e *Error) Unwrap() error { return e.Kind }

// Advice for each refusal.
const (
	noShell    = "Zero runs no shell, so it cannot be split into one program and its arguments"
	noExpand   = "nothing is expanded here: write the value itself, or quote it ('...') to mean the characters"
	quoteIt    = "quote it ('...') to mean the character itself"
	noTilde    = "a shell would replace it with a home folder, and nothing is expanded here: write the full path"
	noComment  = "a shell would ignore the rest of the line as a comment: quote it ('#') to mean the character"
	noAssign   = "a shell would take it as an environment variable for the program: declare variables in the Environment field instead"
	noBreak    = "a line break ends a command in a shell: put the command on one line, or end each line but the last with \\"
	closeQuote = "close the quote"
)

// operators are the shell's control and redirection operators, longest
// first; each byte of one starts an operator.
var operators = []string{"&&", "||", ";;", "<<", ">>", "<&", ">&", "<>", ">|", "|&", "|", "&", ";", "<", ">", "(", ")"}

// Split returns the words of line as a POSIX shell splits them: blanks
// separate words; a backslash keeps the next character as it is (and a
// backslash before a line break joins the lines); single quotes keep
// everything up to the next single quote; double quotes keep everything up
// to the next unescaped double quote, a backslash in them escaping only $,
// `, ", \ and a line break. A line break outside quotes ends the line: only
// blanks may follow it. Anything else a shell would act on is an *Error.
func Split(line string) ([]string, error) {
	p := splitter{line: line}
	return p.split()
}

type splitter struct {
	line  string
	i     int // the next byte
	words []string
	word  strings.Builder
	in    bool // a word is started (an empty quoted word counts)
	// name is whether the word so far is a variable's name, unquoted, so
	// that an = after it in the first word is an assignment.
	name bool
	// last is the word's last byte if it was unquoted, else 0: a ~ after
	// an unquoted = or : is one a shell may expand.
	last byte
}

// refuse makes the error for what starts at byte at.
func (p *splitter) refuse(kind error, at int, found, advice string) error {
	return &Error{Kind: kind, Found: found, At: utf8.RuneCountInString(p.line[:at]) + 1, Advice: advice}
}

func (p *splitter) split() ([]string, error) {
	if i := strings.IndexByte(p.line, 0); i >= 0 {
		return nil, p.refuse(ErrNUL, i, "", "a program's arguments cannot hold one")
	}
	for p.i < len(p.line) {
		c := p.line[p.i]
		start := !p.in
		switch {
		case c == ' ' || c == '\t':
			p.end()
			p.i++
		case c == '\n':
			p.end()
			if strings.Trim(p.line[p.i:], " \t\r\n") != "" {
				return nil, p.refuse(ErrOperator, p.i, "\n", noBreak)
			}
			p.i = len(p.line)
		case c == '\\':
			if p.i+1 == len(p.line) {
				return nil, p.refuse(ErrUnclosed, p.i, `\`, "the line ends with a lone backslash: remove it, or escape the next character")
			}
			if p.line[p.i+1] == '\n' { // a line continuation
				p.i += 2
				continue
			}
			_, size := utf8.DecodeRuneInString(p.line[p.i+1:])
			p.add(p.line[p.i+1:p.i+1+size], false)
			p.i += 1 + size
		case c == '\'':
			end := strings.IndexByte(p.line[p.i+1:], '\'')
			if end < 0 {
				return nil, p.refuse(ErrUnclosed, p.i, "'", closeQuote)
			}
			p.add(p.line[p.i+1:p.i+1+end], false)
			p.i += end + 2
		case c == '"':
			if err := p.double(); err != nil {
				return nil, err
			}
		case c == '$':
			found := "$"
			if p.i+1 < len(p.line) && strings.IndexByte("({'", p.line[p.i+1]) >= 0 {
				found = p.line[p.i : p.i+2]
			}
			return nil, p.refuse(ErrExpansion, p.i, found, noExpand)
		case c == '`':
			return nil, p.refuse(ErrExpansion, p.i, "`", noExpand)
		case strings.IndexByte("|&;<>()", c) >= 0:
			op := string(c)
			for _, o := range operators {
				if strings.HasPrefix(p.line[p.i:], o) {
					op = o
					break
				}
			}
			return nil, p.refuse(ErrOperator, p.i, op, noShell)
		case c == '*' || c == '?' || c == '[':
			return nil, p.refuse(ErrExpansion, p.i, string(c), "a shell would replace it with the names of matching files: "+quoteIt)
		case c == '{' || c == '}':
			return nil, p.refuse(ErrExpansion, p.i, string(c), "a shell may expand braces ({a,b} is two words): "+quoteIt)
		case c == '~' && (start || p.last == '=' || p.last == ':'):
			return nil, p.refuse(ErrExpansion, p.i, "~", noTilde)
		case c == '#' && start:
			return nil, p.refuse(ErrExpansion, p.i, "#", noComment)
		case c == '=' && p.name && len(p.words) == 0 && p.word.Len() > 0:
			return nil, p.refuse(ErrAssignment, 0, p.word.String()+"=", noAssign)
		default:
			_, size := utf8.DecodeRuneInString(p.line[p.i:])
			p.add(p.line[p.i:p.i+size], true)
			p.i += size
		}
		if len(p.words) > MaxWords {
			return nil, &Error{Kind: ErrTooMany, Advice: fmt.Sprintf("a line may have at most %d", MaxWords)}
		}
	}
	p.end()
	if len(p.words) == 0 {
		return nil, &Error{Kind: ErrEmpty, Advice: "type the program to run"}
	}
	if len(p.words) > MaxWords {
		return nil, &Error{Kind: ErrTooMany, Advice: fmt.Sprintf("a line may have at most %d", MaxWords)}
	}
	return p.words, nil
}

// double reads a double-quoted part, from its opening quote.
func (p *splitter) double() error {
	open := p.i
	p.in, p.name, p.last = true, false, 0
	for i := open + 1; i < len(p.line); {
		switch c := p.line[i]; c {
		case '"':
			p.i = i + 1
			return nil
		case '\\':
			if i+1 < len(p.line) {
				switch n := p.line[i+1]; n {
				case '\n':
					i += 2
					continue
				case '$', '`', '"', '\\':
					p.word.WriteByte(n)
					i += 2
					continue
				}
			}
			p.word.WriteByte(c)
			i++
		case '$', '`':
			found := string(c)
			if c == '$' && i+1 < len(p.line) && strings.IndexByte("({", p.line[i+1]) >= 0 {
				found = p.line[i : i+2]
			}
			return p.refuse(ErrExpansion, i, found, "a shell expands it inside double quotes too, and nothing is expanded here: write the value itself, or put it in single quotes")
		default:
			p.word.WriteByte(c)
			i++
		}
	}
	return p.refuse(ErrUnclosed, open, `"`, closeQuote)
}

// add adds text to the word, unquoted or not.
func (p *splitter) add(text string, unquoted bool) {
	if unquoted {
		first := p.word.Len() == 0
		p.name = (first || p.name) && nameChars(text, first)
		p.last = text[len(text)-1]
	} else {
		p.name, p.last = false, 0
	}
	p.in = true
	p.word.WriteString(text)
}

func (p *splitter) end() {
	if p.in {
		p.words = append(p.words, p.word.String())
	}
	p.word.Reset()
	p.in, p.name, p.last = false, false, 0
}

// nameChars reports whether s can be part of a shell variable's name (its
// start, if first).
func nameChars(s string, first bool) bool {
	for i, c := range []byte(s) {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !(first && i == 0) && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
