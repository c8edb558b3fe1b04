// Generates hosts.json, the table TestParseHostTable and FuzzParseHost check
// ParseHost against, from Node's own WHATWG URL parser:
//
//	node internal/guard/netguard/testdata/hosts.mjs > internal/guard/netguard/testdata/hosts.json
//
// Each input is what ParseHost is given: a host as Go's url.Parse decoded it.
// The characters the URL parser itself acts on before the host parser runs
// ("%", "/", "\", "?", "#", "@", tab, CR, LF, and ":" outside brackets) are
// percent-encoded first, so that the host parser sees, after its own
// percent-decoding, exactly the input. A row is {input, want} or
// {input, error: true}; knownDifference rows say what ParseHost does instead,
// and why.

const r = (s, n) => s.repeat(n);

const inputs = [
  // IPv4: the spellings of 127.0.0.1.
  "127.0.0.1", "127.1", "127.0.1", "2130706433", "0x7f000001", "0X7F000001", "0x7F.1",
  "0177.0.0.1", "017700000001", "0177.1", "0x7f.0x0.0x0.0x1", "0x7f.0.0.0x1", "127.0.0.0x1",
  "0x7f.1", "0x7f.0.1", "127.0.0.1.", "0Xf.0Xf.0Xf.0Xf",
  // IPv4: zero, and empty parts.
  "0", "00", "0x", "0X", "0x0", "0.0.0.0", "0x.0x.0", "0x.0x", "1.0x", "0xx1",
  "1.2.3.4", "1.2.3.4.", "1.2.3.4..", ".1.2.3.4", "1..2.3", "1.2.3.", "1.2..",
  // IPv4: too many parts, overflow, bad digits.
  "1.2.3.4.5", "1.2.3.4.5.", "0.0.0.0.0", "256.0.0.1", "1.256.0.1", "255.255.255.255",
  "4294967295", "4294967296", "0xffffffff", "0x100000000", "037777777777", "040000000000",
  "1.16777215", "1.16777216", "1.2.65535", "1.2.65536", "1.2.3.255", "1.2.3.256",
  "1.2.3.09", "09", "08", "07", "0.0.0.08", "01.02.03.04", "0x01.0x02.0x03.0x04",
  "00000000000000000000001", "0x00000000000000000000001", "999999999999999999999999",
  "0x" + r("f", 40), "0" + r("7", 30), "1" + r("0", 100),
  "0xg", "0x7f.1.g", "1.2.3.0xg", "1e3", "1.2.3.4x", "x1.2.3.4", "-1", "+1", "1.2.3.-4",
  "1.2.3.4%", "1.2.3.4 ", " 1.2.3.4", "1.2.3.4\u0000",
  // Names that end in a number, or nearly.
  "a.1", "a.1.", "a.0x1", "a.0x", "a.0xg", "a.09", "1.a", "1.2.3.a", "example.0x7f",
  "example.0x", "example.1e", "1.2.3.4.com", "0x7f.0.0.1.example", "com.123", "a.b.09",
  "xn--1.2.3.4", "1.2.3.xn--4",
  // IPv4 through UTS #46: full-width and other digits and dots.
  "１２７.０.０.１", "１２７。０。０。１", "127。0.0.1", "127．0．0．1", "127｡0.0.1",
  "0ｘ7f000001", "０Ｘ７Ｆ０００００１", "①②⑦.0.0.1", "⒈⒉⒊4", "１２７.１", "127.0.0.１\u3002",
  "\u0661\u0662\u0667.0.0.1",
  // IPv6.
  "[::1]", "[::]", "[0:0:0:0:0:0:0:1]", "[0000:0000:0000:0000:0000:0000:0000:0001]",
  "[00001::]", "[12345::]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::FFFF:127.0.0.1]",
  "[::127.0.0.1]", "[::1.2.3.4]", "[::1.2.3]", "[::1.2.3.4.5]", "[::1.2.3.04]",
  "[::1.2.3.256]", "[::1.2.3.4:5]", "[::1.2.3.4.]", "[::ffff:127.1]", "[::ffff:0x7f.0.0.1]",
  "[::ffff:0.0.0.0]", "[::ffff:255.255.255.255]", "[64:ff9b::127.0.0.1]",
  "[1:2:3:4:5:6:1.2.3.4]", "[1:2:3:4:5:6:7:1.2.3.4]", "[1:2:3:4:5:1.2.3.4]",
  "[::1:2:3:4:5:6:7]", "[1:2:3:4:5:6:7::]", "[1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7:8:9]",
  "[1:2:3:4:5:6:7:8::]", "[::1:2:3:4:5:6:7:8]", "[1::2::3]", "[:1]", "[1:]", "[1::]",
  "[::1:]", "[:::1]", "[1:0:0:2:0:0:0:3]", "[1:0:0:0:2:0:0:3]", "[0:0:1:0:0:2:0:0]",
  "[1:0:2:0:3:0:4:0]", "[1:0::0:0]", "[2001:DB8::1]", "[2001:db8:0:0:0:0:2:1]",
  "[2001:db8::0:1]", "[fe80::1]", "[FE80::1]", "[fe80::1%25eth0]", "[fe80::1%eth0]",
  "[fe80::1%1]", "[::1", "::1", "1::", "[]", "[ ::1]", "[::1 ]", "[::g]", "[::1]x",
  "[example.com]", "[v1.fe80::a+en1]", "[１::1]", "[::1\u0000]", "[::0.0.0.0]",
  "[0::0.0.0.1]", "[::ffff:1.2.3.4:5]",
  // Domains: case, dots, labels.
  "example.com", "EXAMPLE.COM", "Example.Com.", "example.com.", "example..com",
  ".example.com", "..", ".", "a", "localhost", "LOCALHOST", "localhost.", "foo.localhost",
  "-a.com", "a-.com", "a--b.com", "ab--c.com", "0.com", "123.com", "_dmarc.example.com",
  "*.example.com",
  // Domains: ASCII code points, forbidden or not.
  "a b", "a#b", "a%b", "a%41b", "%", "a/b", "a:b", "a<b", "a>b", "a?b", "a@b", "a[b", "a\\b",
  "a]b", "a^b", "a|b", "a\u0000b", "a\u0001b", "a\u001fb", "a\u007fb", "a\tb", "a\nb", "a\rb",
  "a!b", "a$b", "a&b", "a'b", "a(b", "a)b", "a*b", "a+b", "a,b", "a;b", "a=b", "a_b", "a~b",
  "a`b", "a{b", "a}b", "a\"b",
  // Domains: UTS #46 mapping and validation.
  "bücher.de", "BÜCHER.de", "xn--bcher-kva.de", "XN--BCHER-KVA.DE", "Xn--bcher-kva.de",
  "faß.de", "ß", "ΣΑΣ.gr", "ς.gr", "ＥＸＡＭＰＬＥ.com", "example。com", "ａ．ｂ", "ﬁ.com",
  "Ⅻ.com", "ǅ.com", "İstanbul.tr", "K.com", "ℌ.com", "中国.cn", "例え.テスト", "😀.com",
  "a\u0308.com", "\u0308a.com", "a\u00adb", "a\u200bb", "a\u200cb", "a\u200db",
  "\u0915\u094d\u200d\u0937.in", "\u0915\u094d\u200c\u0937.in", "\ufeffexample.com",
  "a\u00a0b", "a\u3000b", "a\u2024b", "a\ufe52b", "a\uff0fb", "a\uff1ab", "a\uff20b",
  "a\uff3cb", "a\uff5bb", "a\uff05b", "a\u2044b", "a\u2215b", "\u3002", "a\u3002", "\u2488",
  "\u0663.com", "a\u0663.com", "مثال.إختبار", "עברית.com", "a.עברית", "x\u05d0.com",
  "\u05d0\u0031.com", "\u05d0x.com", "\u0627\u0031\u0628.com", "a\ud7ff.com", "a\ue000.com",
  "a\ufffd.com", "a\ufffe.com", "a\u{10ffff}.com", "a\u{e0001}.com", "a\u0080b", "a\u009fb",
  "a\u1806b", "\u0640.com", "a\u0640b.com", "\u{1d7ce}\u{1d7cf}\u{1d7d0}.com",
  // Domains: Punycode labels.
  "xn--", "xn--.com", "xn--a", "xn--a.com", "xn--zca", "xn--ZCA", "xn--nxasmq6b",
  "xn--1ch", "xn--ls8h", "xn--abc-", "xn---", "xn--55qx5d.cn", "xn--xn--zca", "xn--a-ecp.ru",
  "xn--invalid!", "xn--zca.xn--zca", "xn--tda", "xn--ss-", "xn--0", "xn--99999999",
  "xn--mgba3gch31f", "xn--4dbrk0ce", "xn--ab-fia", "xn--bcher-kva\u3002de", "ab--c",
  "xn--bcher-kva.xn--", "XN--.com", "\uff58\uff4e\uff0d\uff0d.com", "xn--09", "example.xn--1", "xn--1.example",
  // Long labels and names (no DNS length limit).
  r("a", 63) + ".com", r("a", 64) + ".com", r(r("a", 63) + ".", 4) + "com", r("a", 300),
  r("a", 1000), r("ü", 100) + ".de", r("1.", 200) + "1", r("0", 300), r("ü", 1024) + ".de",
  "a" + r("ü", 1023) + ".de", r("ü", 1025) + ".de",
];

// Where ParseHost, built on golang.org/x/net/idna, knowingly differs from
// Node: input -> {want | error, reason}.
const bidi =
  "UTS #46 CheckBidi applies the RFC 5893 rules to every label of a name that holds an R, AL or AN " +
  "code point; this label breaks one, and x/net/idna refuses it, but Node 20's Ada accepts it: ";
const asciiPunycode =
  "UTS #46 (15.1 and later) refuses a Punycode label that decodes to ASCII only, and so does " +
  "x/net/idna, but Node 20's Ada accepts it";
const knownDifferences = {
  [r("ü", 1025) + ".de"]: {
    error: true,
    reason: "x/net/idna's Punycode decoder refuses a label of more than 1024 code points, which its " +
      "encoder writes, so the canonical form would not parse again: ParseHost refuses the name",
  },
  "\u0663.com": { error: true, reason: bidi + "rule 1, a label must not start with an Arabic-Indic digit (AN)" },
  "a\u0663.com": { error: true, reason: bidi + "rule 5, a label starting left-to-right holds no AN" },
  "x\u05d0.com": { error: true, reason: bidi + "rule 5, a label starting left-to-right holds no R" },
  "xn--abc-": { error: true, reason: asciiPunycode },
  "xn--ss-": { error: true, reason: asciiPunycode },
};

// encode percent-encodes what Node's URL parser would act on before the
// host parser sees it.
function encode(host) {
  const bracketed = host.startsWith("[");
  const close = host.indexOf("]");
  let out = "";
  for (let i = 0; i < host.length; i++) {
    const c = host[i];
    const special = "%/\\?#@\t\n\r".includes(c) || (c === ":" && (!bracketed || (close >= 0 && i > close)));
    out += special ? "%" + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0") : c;
  }
  return out;
}

function parse(host) {
  let u;
  try {
    u = new URL("http://" + encode(host) + "/");
  } catch {
    return { input: host, error: true };
  }
  if (u.username || u.password || u.port || u.pathname !== "/" || u.search || u.hash) {
    throw new Error(`input ${JSON.stringify(host)} was not parsed as a host alone: ${u.href}`);
  }
  return { input: host, want: u.hostname };
}

const seen = new Set();
const rows = [];
for (const input of inputs) {
  if (seen.has(input)) throw new Error(`duplicate input ${JSON.stringify(input)}`);
  seen.add(input);
  const row = parse(input);
  if (knownDifferences[input]) row.knownDifference = knownDifferences[input];
  rows.push(row);
}
for (const input of Object.keys(knownDifferences)) {
  if (!seen.has(input)) throw new Error(`known difference for a missing input ${JSON.stringify(input)}`);
}
process.stdout.write("[\n" + rows.map((row) => JSON.stringify(row)).join(",\n") + "\n]\n");
