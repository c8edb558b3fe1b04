// Generates jsdiff_cases.json: patches made by the real jsdiff 8.0.4, which
// the Go test TestJSDiffCases compares with Unified byte for byte.
//
// Run it from a directory where `npm install diff@8.0.4` was done, e.g.:
//
//	cp internal/textdiff/testdata/gen_cases.mjs /tmp/ref/ &&
//	  (cd /tmp/ref && node gen_cases.mjs) > internal/textdiff/testdata/jsdiff_cases.json
//
// The output is deterministic: random cases come from a seeded generator.
import { createTwoFilesPatch } from 'diff';
import { createRequire } from 'node:module';

const version = createRequire(import.meta.url)('diff/package.json').version;
if (version !== '8.0.4') {
  throw new Error(`want diff 8.0.4, have ${version}`);
}

const cases = [];
function add(name, oldText, newText, names = {}) {
  const oldName = names.oldName ?? 'file.txt';
  const newName = names.newName ?? oldName;
  const oldHeader = names.oldHeader ?? 'original';
  const newHeader = names.newHeader ?? 'modified';
  const patch = createTwoFilesPatch(oldName, newName, oldText, newText, oldHeader, newHeader);
  cases.push({ name, oldName, newName, oldHeader, newHeader, old: oldText, new: newText, patch });
}

const lines = (n, f = (i) => `line ${i}`) =>
  Array.from({ length: n }, (_, i) => f(i + 1) + '\n').join('');
const text20 = lines(20);
const replaceLine = (t, i, s) => {
  const ls = t.split('\n');
  ls[i - 1] = s;
  return ls.join('\n');
};

// Single-line edits and edges.
add('replace middle line', text20, replaceLine(text20, 10, 'changed'));
add('replace first line', text20, replaceLine(text20, 1, 'changed'));
add('replace last line', text20, replaceLine(text20, 20, 'changed'));
add('insert at start', text20, 'new\n' + text20);
add('insert at end', text20, text20 + 'new\n');
add('delete at start', text20, text20.slice('line 1\n'.length));
add('delete at end', text20, text20.slice(0, -'line 20\n'.length));
add('insert in middle', text20, replaceLine(text20, 10, 'line 10\ninserted'));
add('delete in middle', text20, text20.replace('line 10\n', ''));
add('one line file replaced', 'a\n', 'b\n');
add('short file', 'a\nb\nc\n', 'a\nB\nc\n');
add('change near start within context', text20, replaceLine(text20, 3, 'x'));
add('change near end within context', text20, replaceLine(text20, 18, 'x'));

// Hunks separated by fewer and more than 8 common lines.
for (const gap of [0, 1, 3, 7, 8, 9, 10, 16]) {
  const t = lines(40);
  add(`two changes ${gap} lines apart`, t, replaceLine(replaceLine(t, 10, 'A'), 11 + gap, 'B'));
}
add('three hunks', lines(60), replaceLine(replaceLine(replaceLine(lines(60), 5, 'A'), 30, 'B'), 55, 'C'));
add('insert and delete far apart', lines(40), lines(40).replace('line 5\n', '').replace('line 35\n', 'line 35\nnew\n'));

// Missing trailing newlines.
add('old lacks final newline', 'a\nb\nc', 'a\nb\nc\n');
add('new lacks final newline', 'a\nb\nc\n', 'a\nb\nc');
add('both lack final newline, last changed', 'a\nb\nc', 'a\nb\nd');
add('both lack final newline, middle changed', lines(10) + 'end', replaceLine(lines(10), 5, 'x') + 'end');
add('no newline, far from change', lines(20) + 'end', replaceLine(lines(20), 2, 'x') + 'end');
add('no newline, append after', 'a\nb', 'a\nb\nc');
add('no newline, single line each', 'a', 'b');
add('no newline, identical', 'a\nb', 'a\nb');

// Empty sides and identical texts.
add('empty to text', '', 'a\nb\nc\n');
add('text to empty', 'a\nb\nc\n', '');
add('empty to one line', '', 'a\n');
add('empty to no newline', '', 'a');
add('no newline to empty', 'a', '');
add('both empty', '', '');
add('identical', text20, text20);
add('identical one line', 'x\n', 'x\n');
add('newline only to empty', '\n', '');
add('empty to newline only', '', '\n');

// Unicode, blank lines, CR characters.
add('unicode', 'héllo\nwörld\n日本語\n', 'héllo\nwereld\n日本語\n🎉 party\n');
add('emoji lines', '😀\n😃\n😄\n', '😀\n😅\n😄\n');
add('blank lines inserted', 'a\nb\nc\n', 'a\n\nb\n\nc\n');
add('blank lines removed', 'a\n\n\nb\n\n', 'a\nb\n');
add('only blank lines', '\n\n\n', '\n\n\n\n\n');
add('whitespace-only change', 'a\n  b\nc\n', 'a\n\tb\nc\n');
add('crlf lines', 'a\r\nb\r\nc\r\n', 'a\r\nB\r\nc\r\n');
add('crlf to lf', 'a\r\nb\r\n', 'a\nb\n');
add('lone cr', 'a\rb\nc\n', 'a\rB\nc\n');
add('cr at end without newline', 'a\nb\r', 'a\nc\r');

// Repeated lines, where several minimal diffs exist.
add('repeat insert duplicate', 'a\n', 'a\na\n');
add('repeat x a to a a', 'x\na\n', 'a\na\n');
add('repeat a x to a a', 'a\nx\n', 'a\na\n');
add('repeat abab', 'a\nb\na\nb\n', 'b\na\nb\na\n');
add('repeat abc cba', 'a\nb\nc\n', 'c\nb\na\n');
add('repeat swap blocks', 'a\na\nb\nb\n', 'b\nb\na\na\n');
add('repeat many same lines', lines(12, () => 'same'), lines(15, () => 'same'));
add('repeat many same lines shrink', lines(15, () => 'same'), lines(9, () => 'same'));
add('repeat braces', '{\n}\n{\n}\n', '{\n  x\n}\n{\n}\n{\n}\n');
add('repeat blank-separated', 'a\n\nb\n\nc\n', 'a\n\nc\n\nb\n');
add('repeat rotate', 'a\nb\nc\nd\ne\n', 'b\nc\nd\ne\na\n');
add('repeat all different', 'a\nb\nc\n', 'd\ne\nf\n');
add('code edit', 'func f() {\n\treturn 1\n}\n\nfunc g() {\n\treturn 2\n}\n',
  'func f() {\n\treturn 10\n}\n\nfunc h() {\n}\n\nfunc g() {\n\treturn 2\n}\n');

// Names and headers.
add('different names', 'a\n', 'b\n', { oldName: 'a/x.go', newName: 'b/x.go' });
add('empty headers', 'a\n', 'b\n', { oldHeader: '', newHeader: '' });
add('names with spaces', 'a\n', 'b\n', { oldName: '/tmp/my file.txt', oldHeader: 'old hdr', newHeader: 'new\thdr' });

// Seeded random cases (mulberry32).
let seed = 20240601;
function rand() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const int = (n) => Math.floor(rand() * n);

function join(ls, finalNewline) {
  const t = ls.join('\n');
  return ls.length === 0 ? '' : finalNewline ? t + '\n' : t;
}

// Edits ls in place with a few random block insertions, deletions and replacements.
function edit(ls, nEdits, alphabet) {
  ls = ls.slice();
  for (let e = 0; e < nEdits; e++) {
    const at = int(ls.length + 1);
    const del = rand() < 0.6 ? int(4) : 0;
    const ins = Array.from({ length: rand() < 0.6 ? int(4) : 0 }, () => alphabet());
    ls.splice(at, del, ...ins);
  }
  return ls;
}

// Small texts over tiny alphabets: many repeats and ties.
for (let i = 0; i < 200; i++) {
  const alpha = ['a', 'b', 'c', '', 'a b', 'x'].slice(0, 2 + int(5));
  const letter = () => pick(alpha);
  const oldLs = Array.from({ length: int(12) }, letter);
  const newLs = rand() < 0.3 ? Array.from({ length: int(12) }, letter) : edit(oldLs, 1 + int(4), letter);
  add(`random small ${i}`, join(oldLs, rand() < 0.8), join(newLs, rand() < 0.8));
}

// Medium texts: mostly distinct lines, some repeats, several edits.
const words = ['alpha', 'beta', 'gamma', 'delta', '}', '{', '', 'return nil', 'x := 1', 'ünï', '🙂'];
for (let i = 0; i < 60; i++) {
  const line = () => (rand() < 0.4 ? pick(words) : `line ${int(1000)}`);
  const oldLs = Array.from({ length: 20 + int(200) }, line);
  const newLs = edit(oldLs, 1 + int(8), line);
  add(`random medium ${i}`, join(oldLs, rand() < 0.9), join(newLs, rand() < 0.9));
}

// Larger texts with few or many edits, and wholly different texts.
for (let i = 0; i < 3; i++) {
  const line = () => `stmt${int(5000)};`;
  const oldLs = Array.from({ length: 1000 }, line);
  add(`random large ${i}`, join(oldLs, true), join(edit(oldLs, 3, line), true));
}
for (let i = 0; i < 2; i++) {
  const line = () => (rand() < 0.2 ? pick(words) : `l${int(100000)}`);
  const oldLs = Array.from({ length: 600 }, line);
  add(`random many edits ${i}`, join(oldLs, true), join(edit(oldLs, 150, line), true));
}
// Beyond Unified's search budget (edit distance 5010); it falls back to
// deleting then inserting everything, which jsdiff also does here.
add('disjoint large', lines(2500, (j) => `old ${j}`), lines(2510, (j) => `new ${j}`));
for (let i = 0; i < 3; i++) {
  const n = 100 + 150 * i;
  add(`random disjoint ${i}`, lines(n, (j) => `old ${j} ${int(10)}`), lines(n + 7, (j) => `new ${j} ${int(10)}`));
}
for (let i = 0; i < 3; i++) {
  const letter = () => pick(['a', 'b', 'c']);
  const oldLs = Array.from({ length: 300 }, letter);
  add(`random repetitive ${i}`, join(oldLs, true), join(Array.from({ length: 300 }, letter), true));
}

process.stdout.write(JSON.stringify(cases, null, 1) + '\n');
