// gen_cases.mjs writes minimatch_cases.json: golden (pattern, path, match)
// triples computed by the real minimatch with { dot: true }, as the reference
// MCP filesystem server calls it. TestMinimatchCases checks every one.
//
// Run it from a directory where `import "minimatch"` resolves to minimatch
// 10.2.6 (here /tmp/ref, which has it in node_modules):
//   cp /work/main/internal/glob/testdata/gen_cases.mjs /tmp/ref/ &&
//   (cd /tmp/ref && node gen_cases.mjs) > /work/main/internal/glob/testdata/minimatch_cases.json
import { minimatch } from 'minimatch';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const version = JSON.parse(readFileSync(require.resolve('minimatch/package.json'), 'utf8')).version;

// Paths tried against every pattern, plus the ones listed with it.
const common = ['', 'a', '.a', 'a/b', 'a/'];

// [pattern, [extra paths]]
const groups = [
  // literals and path shapes
  ['a', ['a//', '/a', 'ab']],
  ['a/b', ['a//b', 'a/b/', 'a/b//', '/a/b', 'a/c']],
  ['a/b/', ['a/b/', 'a/b//']],
  ['/a', ['/a', '//a']],
  ['a//b', ['a//b']],
  ['./a', ['./a', 'a']],
  ['a/./b', ['a/./b']],
  ['.', []],
  ['..', []],
  ['a/../b', ['b', 'a/../b']],
  ['*/..', []],
  ['a/b/..', []],
  ['', []],
  ['a|b$,#- ', ['a|b$,#- ']],
  // *
  ['*', ['.hidden', 'a.b', 'a/b/']],
  ['***', ['abc']],
  ['a*', ['abc', 'ba', 'a/x']],
  ['*a*', ['bab', 'bb', '.a.']],
  ['*.go', ['main.go', '.go', 'x/main.go', 'main.go/']],
  ['*.', ['a.', '.']],
  ['.*', ['.git', '.', '..', '.a/b']],
  ['*.*', ['a.b', '.a', 'ab', '.']],
  ['..*', ['..a', '..']],
  ['*\\.txt', ['a.txt', 'a\\.txt']],
  ['*a\\|b', ['xa|b', 'xa\\|b', 'b']],
  ['x*a\\|b', ['xa', 'xya', 'b', 'xa|b']],
  ['a*b*c', ['abc', 'aXbYc', 'acb']],
  // ?
  ['?', ['é', '😀', '?']],
  ['??', ['ab', '😀', 'abc', '..']],
  ['?.txt', ['a.txt', '.txt', 'ab.txt']],
  ['??\\.txt', ['ab.txt', 'a\\.txt']],
  ['a?c', ['abc', 'a/c', 'ac']],
  ['?*', ['a', '.a', '..']],
  // classes
  ['[abc]', ['c', 'd', 'ab']],
  ['[a-c]x', ['bx', 'dx']],
  ['[!a]', ['b', '.', '/']],
  ['[^a]', ['b', 'c']],
  ['[]a]', [']', 'a']],
  ['[a-]', ['-', 'a']],
  ['[z-a]x', ['zx', 'ax']],
  ['[\\]]', [']']],
  ['[\\^a]', ['^', 'b', 'a']],
  ['[!]]', ['x', ']']],
  ['[a', ['[a']],
  ['a]', ['a]']],
  ['[.]*', ['.x', '.']],
  ['[x]', ['x', '[x]']],
  ['\\[x]', ['[x]', 'x']],
  ['[😀]', ['😀']],
  ['[a-😀]', ['😀', 'z']],
  ['[[:alpha:]]', ['z', 'É', '1', 'ж']],
  ['[[:digit:]]*', ['1a', 'a1', '٣']],
  ['[[:space:]]', [' ', '\t']],
  ['[[:upper:]][[:lower:]]', ['Ab', 'aB']],
  ['[[:xdigit:]]', ['f', 'g']],
  ['[[:ascii:]]', ['~', 'é']],
  ['[[:graph:]]', ['x', ' ']],
  ['[[:punct:]]', ['!', 'x']],
  ['[[:alnum:]]_x', ['1_x', '__x']],
  ['[[:word:]]', ['_', '-']],
  ['[[:cntrl:]]', ['\u0001', 'x']],
  ['[[:print:]]', ['x', '\u0001']],
  ['[[:blank:]]', [' ', '\n']],
  ['[a-[:alpha:]]', []],
  ['[[:alpha:]', ['[:alpha:]', 'a']],
  // **
  ['**', ['a/b/c', '.git/x', 'a/./b', 'a/../b']],
  ['**/*.go', ['main.go', 'x/main.go', 'x/y/z.go', '.x/y.go', 'x/./y.go', 'x.go/']],
  ['a/**', ['a/x', 'a/x/y', 'a/.x']],
  ['**/a', ['x/a', 'x/y/a', 'x/a/']],
  ['a/**/b', ['a/b', 'a/x/b', 'a/x/y/b', 'a/./b', 'a/../b', 'a/.x/b']],
  ['a/**/b/**/c', ['a/b/c', 'a/x/b/y/c', 'a/b/b/c']],
  ['**/a/b/**/c/**/d', ['a/b/c/d', 'a/b/x/c/d', 'x/a/b/c/y/d']],
  ['**/a/**/b', ['a/b', 'a/./x/b', 'x/a/y/b']],
  ['**/a/**/..', ['a/..', 'a/x/..']],
  ['a**b', ['ab', 'axb', 'a/b']],
  ['**a', ['a', 'ba', 'x/a']],
  ['**/.git/**', ['.git/x', 'a/.git/x', 'a/.git']],
  ['**/node_modules', ['node_modules', 'a/node_modules', 'a/node_modules/b']],
  ['**/..', ['a/..']],
  ['**/.', ['a/.']],
  ['a/**/', ['a/b/', 'a/b/c/']],
  ['a/**/*', ['a/b/', 'a/b/c', 'a/']],
  ['**/**/a', ['x/a']],
  ['**/*', ['x/', '.x']],
  // braces
  ['{a,b}', ['c']],
  ['{a,b}/c', ['a/c', 'b/c', 'c/c']],
  ['a{,b}', ['ab']],
  ['{a,{b,c}}', ['c']],
  ['{1..3}', ['1', '2', '4']],
  ['{01..10..3}', ['01', '04', '10', '1']],
  ['{a..e..2}', ['c', 'd']],
  ['{5..1..2}', ['5', '3', '2']],
  ['{-1..1}', ['-1', '0']],
  ['{A..c}', ['[', '\\', 'A', '`']],
  ['x{{a,b}}y', ['x{a}y', 'xay']],
  ['{a},b}', ['a}', 'b']],
  ['{,}', []],
  ['!{,}', []],
  ['{a}', ['{a}']],
  ['{}', ['{}']],
  ['\\{a,b\\}', ['{a,b}']],
  ['${a,b}', ['${a,b}', '$a']],
  ['a\\\\{b,c}', ['ab', 'a\\b']],
  ['*\\.{txt,md}', ['a.txt', 'a.md']],
  ['{**/*.go,*.md}', ['x/y.go', 'a.md', 'x/a.md']],
  ['{a,b}{c,d}', ['ac', 'bd', 'ab']],
  ['{a..c}{1..2}', ['c2', 'd1']],
  ['a{b', ['a{b']],
  ['{a{b,c}', ['{ab', '{ac', 'ab']],
  ['x{{a,b}', ['x{a', 'x{b']],
  ['{a,b}{', ['a{', 'b{']],
  ['a\n{b,c}', ['a\nb']],
  // escapes
  ['\\*', ['*', 'x']],
  ['a\\*b', ['a*b', 'axb']],
  ['\\?', ['?', 'x']],
  ['\\\\', ['\\']],
  ['a\\', ['a\\']],
  ['\\a', ['a']],
  ['\\!a', ['!a']],
  ['\\#a', ['#a']],
  // negation and comments
  ['!a', ['x/y']],
  ['!!a', []],
  ['!!!a', []],
  ['!*.go', ['x.go', 'x.md', 'd/x.go']],
  ['!', []],
  ['!**/*.go', ['x/y.go', 'x/y.md']],
  ['#a', ['#a']],
  ['#', ['#']],
  ['!#a', ['#a']],
  // extglobs
  ['@(a|b)', ['c', 'ab']],
  ['*(a|b)', ['abba', 'abc']],
  ['+(a|b)', ['abba', 'abc']],
  ['?(a|b)', ['ab']],
  ['x!(a)', ['x', 'xa', 'xb', 'xab']],
  ['a!(b).txt', ['ab.txt', 'ac.txt', 'a.txt']],
  ['*.!(js)', ['a.js', 'a.ts', 'a.']],
  ['!(*.js)', ['a.js', 'a.ts']],
  ['x+(a|*(b))', ['x', 'xab', 'xbb']],
  ['@()', ['@()']],
  ['a@()', ['a@()']],
  ['@(a|)', ['@(a|)']],
  ['*(.)', ['...']],
  ['@(!(a))x', ['ax', 'bx', 'x']],
  ['x!(a*(b))', ['xa', 'xabb', 'xc']],
  ['x!(a|)', ['x', 'xa', 'xb']],
  ['@(a', ['@(a']],
  ['*(*(*(a)))', ['aaa', 'b']],
  ['?(*(a))', ['aaa', 'b']],
  ['@(x\\|y)', ['x', 'x|y']],
  ['+(a)b@(c|d)', ['aabc', 'bd', 'abe']],
  ['@(*)', ['.', '..', '.a']],
  ['!(.)x', ['.x', 'x']],
  ['x@(.|..)', ['x.', 'x..']],
  ['@(a|b)/**', ['a/x', 'b/x/y', 'c/x']],
  // unicode
  ['*😀', ['x😀', '😀']],
  ['é*', ['é', 'éa', 'e']],
  ['?😀', ['x😀']],
];

// Patterns minimatch throws on: its regexp for the segment has an escape that
// the "u" flag (added for POSIX classes) forbids. Compile must fail too.
const throwing = ['[[:alpha:]]-x', '[[:digit:]],', '[[:alpha:]]\\!', '[[:alpha:]] x', 'y/[[:upper:]]#'];

// Patterns that minimatch accepts but this package rejects on purpose, to
// bound the work an untrusted pattern can cause.
const rejected = [
  ['a'.repeat(4097), 'pattern is longer than 4096 bytes'],
  ['{a,b}'.repeat(11), 'brace expansion has more than 1024 alternatives'],
  ['{1..2000}', 'brace expansion has more than 1024 alternatives'],
  ['{1..99999999999999999}', 'brace sequence number beyond 2^53'],
  ['x' + '!(a|b)'.repeat(40), 'negated extglobs whose regexp grows exponentially'],
];

const cases = [];
for (const [pattern, extra] of groups) {
  for (const path of [...new Set([...common, ...extra])]) {
    cases.push({ pattern, path, match: minimatch(path, pattern, { dot: true }) });
  }
}
const errors = throwing.map(pattern => {
  try {
    minimatch('a', pattern, { dot: true });
    throw new Error(`expected minimatch to throw for ${pattern}`);
  } catch (e) {
    return { pattern, minimatch: String(e.message) };
  }
});
const rejections = rejected.map(([pattern, reason]) => {
  let result;
  try {
    // Only what minimatch does cheaply is recorded.
    result = pattern.length < 1000 && !pattern.includes('!(') ? minimatch('a', pattern, { dot: true }) : 'not run';
  } catch (e) {
    result = 'throws: ' + e.message;
  }
  return { pattern, reason, minimatchMatchesA: result };
});

const lines = [];
lines.push('{');
lines.push(`  "generator": "testdata/gen_cases.mjs",`);
lines.push(`  "minimatch": ${JSON.stringify(version)},`);
lines.push(`  "node": ${JSON.stringify(process.version)},`);
lines.push(`  "options": {"dot": true},`);
lines.push('  "cases": [');
lines.push(cases.map(c => '    ' + JSON.stringify(c)).join(',\n'));
lines.push('  ],');
lines.push('  "errors": [');
lines.push(errors.map(c => '    ' + JSON.stringify(c)).join(',\n'));
lines.push('  ],');
lines.push('  "rejected": [');
lines.push(rejections.map(c => '    ' + JSON.stringify(c)).join(',\n'));
lines.push('  ]');
lines.push('}');
console.log(lines.join('\n'));
