#include "token_regex.hpp"

#include <limits>

#include "unicode.hpp"

namespace kvcim::cmodel {

// Named, not anonymous: TokenRegex::Program (declared in the header) holds these types.
namespace token_regex_detail {

// One set of code points: items (ranges, or a property with its own negation), then negated.
struct CharClass {
  enum class Prop : uint8_t { range, letter, number, space };
  struct Item {
    Prop prop;
    bool negated;
    char32_t first, last;
  };
  std::vector<Item> items;
  bool negated = false;
  bool fold = false;  // (?i:...): ASCII letters match either case

  bool item_matches(char32_t cp) const {
    for (const Item& it : items) {
      bool in = false;
      switch (it.prop) {
        case Prop::range: in = cp >= it.first && cp <= it.last; break;
        case Prop::letter: in = cp < unicode::kRawByte && unicode::is_letter(cp); break;
        case Prop::number: in = cp < unicode::kRawByte && unicode::is_number(cp); break;
        case Prop::space: in = cp < unicode::kRawByte && unicode::is_space(cp); break;
      }
      if (in != it.negated) return true;
    }
    return false;
  }
  bool matches(char32_t cp) const {
    bool in = item_matches(cp);
    if (!in && fold && cp < 0x80 && ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z')) in = item_matches(cp ^ 0x20);
    return in != negated;
  }
};

struct Node {
  enum class Kind { cls, concat, alt, repeat, look } kind;
  std::vector<Node> kids;
  int cls = -1;
  int min = 0, max = 0;  // repeat; max < 0: unbounded
  bool greedy = true;
  bool negative = false;  // look: (?!...)
};

enum class Op : uint8_t { cls, split, jmp, look, match };
struct Inst {
  Op op;
  bool negative;  // look
  int a, b;       // cls: class; split: first, second; jmp: a; look: program start in a
};

}  // namespace token_regex_detail

struct TokenRegex::Program {
  std::vector<token_regex_detail::CharClass> classes;
  std::vector<token_regex_detail::Inst> code;
  int start = 0;
};

namespace {

using token_regex_detail::CharClass;
using token_regex_detail::Inst;
using token_regex_detail::Node;
using token_regex_detail::Op;

class Parser {
 public:
  Parser(const std::string& pattern, TokenRegex::Program& p) : s_(unicode::decode_utf8(pattern)), p_(p) {}

  Node parse() {
    Node n = alternation(false);
    if (i_ < s_.size()) error("unbalanced ')'");
    return n;
  }

 private:
  [[noreturn]] void error(const std::string& why) const {
    throw RegexError(why + " at offset " + std::to_string(i_));
  }
  bool more() const { return i_ < s_.size(); }
  char32_t peek() const { return s_[i_]; }
  bool eat(char32_t c) {
    if (more() && peek() == c) {
      ++i_;
      return true;
    }
    return false;
  }

  int add_class(CharClass c, bool fold) {
    c.fold = fold;
    p_.classes.push_back(std::move(c));
    return static_cast<int>(p_.classes.size()) - 1;
  }
  static Node leaf(int cls) {
    Node n{Node::Kind::cls, {}};
    n.cls = cls;
    return n;
  }

  Node alternation(bool fold) {
    Node alt{Node::Kind::alt, {}};
    alt.kids.push_back(sequence(fold));
    while (eat('|')) alt.kids.push_back(sequence(fold));
    return alt.kids.size() == 1 ? std::move(alt.kids[0]) : alt;
  }

  Node sequence(bool fold) {
    Node seq{Node::Kind::concat, {}};
    while (more() && peek() != '|' && peek() != ')') seq.kids.push_back(quantified(fold));
    return seq;
  }

  int number() {
    if (!more() || peek() < '0' || peek() > '9') error("expected a number in {}");
    int v = 0;
    while (more() && peek() >= '0' && peek() <= '9') {
      v = v * 10 + static_cast<int>(peek() - '0');
      if (v > 1000) error("a repeat count above 1000");
      ++i_;
    }
    return v;
  }

  Node quantified(bool fold) {
    Node atom_node = atom(fold);
    int min = -1, max = -1;
    if (eat('?')) min = 0, max = 1;
    else if (eat('*')) min = 0, max = -1;
    else if (eat('+')) min = 1, max = -1;
    else if (more() && peek() == '{') {
      ++i_;
      min = number();
      max = min;
      if (eat(',')) max = more() && peek() == '}' ? -1 : number();
      if (!eat('}')) error("expected '}'");
      if (max >= 0 && max < min) error("a repeat {n,m} with m < n");
    } else {
      return atom_node;
    }
    if (atom_node.kind == Node::Kind::look) error("a quantified lookahead");
    Node r{Node::Kind::repeat, {}};
    r.min = min;
    r.max = max;
    r.greedy = !eat('?');
    if (more() && peek() == '+') error("possessive quantifiers are not supported");
    if (max < 0 && nullable(atom_node)) error("an unbounded repeat of something that can match nothing");
    r.kids.push_back(std::move(atom_node));
    return r;
  }

  static bool nullable(const Node& n) {
    switch (n.kind) {
      case Node::Kind::cls: return false;
      case Node::Kind::look: return true;
      case Node::Kind::repeat: return n.min == 0 || nullable(n.kids[0]);
      case Node::Kind::concat:
        for (const Node& k : n.kids)
          if (!nullable(k)) return false;
        return true;
      case Node::Kind::alt:
        for (const Node& k : n.kids)
          if (nullable(k)) return true;
        return false;
    }
    return true;
  }

  Node atom(bool fold) {
    const char32_t c = peek();
    if (c == '(') {
      ++i_;
      Node inner;
      if (eat('?')) {
        if (eat(':')) {
          inner = alternation(fold);
        } else if (eat('i')) {
          if (!eat(':')) error("inline flags other than (?i:...) are not supported");
          inner = alternation(true);
        } else if (eat('!') || (more() && peek() == '=')) {
          const bool negative = s_[i_ - 1] == '!';
          if (!negative) ++i_;
          Node look{Node::Kind::look, {}};
          look.negative = negative;
          look.kids.push_back(alternation(fold));
          inner = std::move(look);
        } else {
          error("group (?" + std::string(1, static_cast<char>(more() ? peek() : '?')) + " not supported");
        }
      } else {
        inner = alternation(fold);  // a capturing group, matched as a plain one
      }
      if (!eat(')')) error("expected ')'");
      return inner;
    }
    if (c == '[') return leaf(add_class(bracket(), fold));
    if (c == '.') {
      ++i_;
      CharClass cc;
      cc.items.push_back({CharClass::Prop::range, false, '\n', '\n'});
      cc.negated = true;
      return leaf(add_class(cc, fold));
    }
    if (c == ')' || c == '|') error("unexpected '" + std::string(1, static_cast<char>(c)) + "'");
    if (c == '*' || c == '+' || c == '?' || c == '{') error("a quantifier with nothing to repeat");
    if (c == '^' || c == '$') error("anchors (^ $) are not supported");
    CharClass cc;
    cc.items.push_back(escape_or_literal());
    return leaf(add_class(cc, fold));
  }

  // One item: a literal code point or an escape (inside or outside a bracket).
  CharClass::Item escape_or_literal() {
    const char32_t c = s_[i_++];
    if (c != '\\') return {CharClass::Prop::range, false, c, c};
    if (!more()) error("a trailing backslash");
    const char32_t e = s_[i_++];
    auto lit = [](char32_t x) { return CharClass::Item{CharClass::Prop::range, false, x, x}; };
    switch (e) {
      case 'r': return lit('\r');
      case 'n': return lit('\n');
      case 't': return lit('\t');
      case 'f': return lit('\f');
      case 'v': return lit('\v');
      case 's': return {CharClass::Prop::space, false, 0, 0};
      case 'S': return {CharClass::Prop::space, true, 0, 0};
      case 'p':
      case 'P': {
        std::string name;
        if (eat('{')) {
          while (more() && peek() != '}') name += static_cast<char>(s_[i_++]);
          if (!eat('}')) error("expected '}' after \\p{");
        } else if (more()) {
          name = std::string(1, static_cast<char>(s_[i_++]));
        }
        const bool neg = e == 'P';
        if (name == "L") return {CharClass::Prop::letter, neg, 0, 0};
        if (name == "N") return {CharClass::Prop::number, neg, 0, 0};
        error("the property \\p{" + name + "} is not supported (\\p{L} and \\p{N} are)");
      }
      default:
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '0' && e <= '9'))
          error("the escape \\" + std::string(1, static_cast<char>(e)) + " is not supported");
        return lit(e);  // escaped punctuation
    }
  }

  CharClass bracket() {
    ++i_;  // '['
    CharClass cc;
    cc.negated = eat('^');
    bool first = true;
    while (more() && (peek() != ']' || first)) {
      first = false;
      if (peek() == '[') error("nested classes are not supported");
      CharClass::Item it = escape_or_literal();
      if (it.prop == CharClass::Prop::range && more() && peek() == '-' && i_ + 1 < s_.size() && s_[i_ + 1] != ']') {
        ++i_;
        const CharClass::Item hi = escape_or_literal();
        if (hi.prop != CharClass::Prop::range || hi.first < it.first) error("a bad range in a class");
        it.last = hi.first;
      }
      cc.items.push_back(it);
    }
    if (!eat(']')) error("expected ']'");
    return cc;
  }

  std::u32string s_;
  size_t i_ = 0;
  TokenRegex::Program& p_;
};

class Compiler {
 public:
  explicit Compiler(std::vector<Inst>& code) : code_(code) {}

  void emit(const Node& n) {
    switch (n.kind) {
      case Node::Kind::cls: code_.push_back({Op::cls, false, n.cls, 0}); break;
      case Node::Kind::concat:
        for (const Node& k : n.kids) emit(k);
        break;
      case Node::Kind::alt: {
        std::vector<size_t> jumps;
        for (size_t k = 0; k < n.kids.size(); ++k) {
          size_t split = 0;
          if (k + 1 < n.kids.size()) {
            split = code_.size();
            code_.push_back({Op::split, false, 0, 0});
            code_[split].a = here();
          }
          emit(n.kids[k]);
          if (k + 1 < n.kids.size()) {
            jumps.push_back(code_.size());
            code_.push_back({Op::jmp, false, 0, 0});
            code_[split].b = here();
          }
        }
        for (size_t j : jumps) code_[j].a = here();
        break;
      }
      case Node::Kind::repeat: {
        for (int k = 0; k < n.min; ++k) emit(n.kids[0]);
        if (n.max < 0) {
          const size_t split = code_.size();
          code_.push_back({Op::split, false, 0, 0});
          const int body = here();
          emit(n.kids[0]);
          code_.push_back({Op::jmp, false, static_cast<int>(split), 0});
          set_split(split, body, here(), n.greedy);
        } else {
          std::vector<size_t> splits;
          for (int k = n.min; k < n.max; ++k) {
            splits.push_back(code_.size());
            code_.push_back({Op::split, false, 0, 0});
            code_[splits.back()].a = here();
            emit(n.kids[0]);
          }
          for (size_t s : splits) set_split(s, code_[s].a, here(), n.greedy);
        }
        break;
      }
      case Node::Kind::look: {
        // the sub-program sits inline, jumped over; the look instruction runs it
        const size_t look = code_.size();
        code_.push_back({Op::look, n.negative, 0, 0});
        const size_t skip = code_.size();
        code_.push_back({Op::jmp, false, 0, 0});
        code_[look].a = here();
        emit(n.kids[0]);
        code_.push_back({Op::match, false, 0, 0});
        code_[skip].a = here();
        break;
      }
    }
  }

 private:
  int here() const { return static_cast<int>(code_.size()); }
  void set_split(size_t at, int body, int after, bool greedy) {
    code_[at].a = greedy ? body : after;
    code_[at].b = greedy ? after : body;
  }
  std::vector<Inst>& code_;
};

struct Thread {
  int pc;
  size_t sp;
};

// The end of the first match of the program at `pc` starting at `sp`, or npos; `budget` counts
// the instructions run (shared with the lookaheads inside).
size_t run(const TokenRegex::Program& p, int pc0, const std::u32string& text, size_t sp0, int64_t& budget) {
  std::vector<Thread> stack{{pc0, sp0}};
  while (!stack.empty()) {
    Thread t = stack.back();
    stack.pop_back();
    while (true) {
      if (--budget < 0) throw RegexError("the pattern backtracks too much on this text");
      const Inst& in = p.code[static_cast<size_t>(t.pc)];
      if (in.op == Op::match) return t.sp;
      if (in.op == Op::cls) {
        if (t.sp >= text.size() || !p.classes[static_cast<size_t>(in.a)].matches(text[t.sp])) break;
        ++t.sp;
        ++t.pc;
      } else if (in.op == Op::jmp) {
        t.pc = in.a;
      } else if (in.op == Op::split) {
        stack.push_back({in.b, t.sp});
        t.pc = in.a;
      } else {  // look: the sub-program starts at in.a; this instruction is followed by a jump past it
        const bool found = run(p, in.a, text, t.sp, budget) != std::u32string::npos;
        if (found == in.negative) break;
        ++t.pc;
      }
    }
  }
  return std::u32string::npos;
}

}  // namespace

TokenRegex TokenRegex::compile(const std::string& pattern) {
  auto p = std::make_shared<Program>();
  const Node root = Parser(pattern, *p).parse();
  Compiler(p->code).emit(root);
  p->code.push_back({Op::match, false, 0, 0});
  TokenRegex r;
  r.program_ = std::move(p);
  return r;
}

std::vector<std::pair<size_t, size_t>> TokenRegex::find_all(const std::u32string& text) const {
  std::vector<std::pair<size_t, size_t>> out;
  // generous for the tokenizers' patterns (tens of steps per code point), small enough that a
  // pathological pattern fails in well under a second
  int64_t budget = 20000 + 2000 * static_cast<int64_t>(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = run(*program_, 0, text, pos, budget);
    if (end == std::u32string::npos || end == pos) {
      ++pos;
      continue;
    }
    out.emplace_back(pos, end);
    pos = end;
  }
  return out;
}

}  // namespace kvcim::cmodel
