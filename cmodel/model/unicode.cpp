#include "unicode.hpp"

#include <algorithm>

#include "unicode_tables.hpp"

namespace kvcim::cmodel::unicode {

std::u32string decode_utf8(const std::string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    char32_t cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) {
      const unsigned char d = s[i + k];
      ok = (d & 0xC0) == 0x80;
      cp = (cp << 6) | (d & 0x3F);
    }
    // overlong forms, surrogates and values above U+10FFFF are not UTF-8 either
    static const char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMin[n] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (ok) {
      out.push_back(cp);
      i += n;
    } else {
      out.push_back(kRawByte + c);
      ++i;
    }
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp >= kRawByte) {
    out.push_back(static_cast<char>(cp - kRawByte));
  } else if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string encode_utf8(const std::u32string& s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t cp : s) append_utf8(out, cp);
  return out;
}

namespace {

bool in_ranges(const CodeRange* r, size_t n, char32_t cp) {
  const CodeRange* end = r + n;
  const CodeRange* it = std::upper_bound(r, end, cp, [](char32_t c, const CodeRange& x) { return c < x.first; });
  return it != r && cp <= (it - 1)->last;
}

uint8_t combining_class(char32_t cp) {
  if (cp < 0x300) return 0;
  const CombiningClass* end = kCombiningClasses + kCombiningClasses_size;
  const CombiningClass* it =
      std::lower_bound(kCombiningClasses, end, cp, [](const CombiningClass& x, char32_t c) { return x.cp < c; });
  return it != end && it->cp == cp ? it->ccc : 0;
}

// Hangul syllables compose and decompose by arithmetic (Unicode 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

void decompose(char32_t cp, std::u32string& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const char32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount) out.push_back(kTBase + s % kTCount);
    return;
  }
  const Decomposition* end = kDecompositions + kDecompositions_size;
  const Decomposition* it =
      std::lower_bound(kDecompositions, end, cp, [](const Decomposition& x, char32_t c) { return x.cp < c; });
  if (it == end || it->cp != cp) {
    out.push_back(cp);
    return;
  }
  for (int k = 0; k < it->count; ++k) decompose(it->parts[k], out);
}

char32_t compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  const Composition* end = kCompositions + kCompositions_size;
  const Composition* it = std::lower_bound(kCompositions, end, std::make_pair(a, b), [](const Composition& x, auto key) {
    return x.first != key.first ? x.first < key.first : x.second < key.second;
  });
  return it != end && it->first == a && it->second == b ? it->composite : 0;
}

}  // namespace

bool is_letter(char32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  return in_ranges(kLetters, kLetters_size, cp);
}

bool is_number(char32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return in_ranges(kNumbers, kNumbers_size, cp);
}

bool is_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

std::string nfc(const std::string& s) {
  // Below U+0300 nothing decomposes into, or composes with, a later code point: already NFC.
  bool simple = true;
  for (unsigned char c : s) simple = simple && c < 0xCC;  // lead bytes of U+0300 and above
  if (simple) return s;
  const std::u32string in = decode_utf8(s);
  std::u32string d;
  d.reserve(in.size());
  for (char32_t cp : in) decompose(cp, d);
  // canonical ordering: stable sort of each run of non-starters by combining class
  for (size_t i = 0; i < d.size();) {
    if (combining_class(d[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < d.size() && combining_class(d[j]) != 0) ++j;
    std::stable_sort(d.begin() + static_cast<std::ptrdiff_t>(i), d.begin() + static_cast<std::ptrdiff_t>(j),
                     [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    i = j;
  }
  // composition: a character joins the last starter unless blocked (something between them of
  // class 0 or of a class >= its own)
  std::u32string out;
  out.reserve(d.size());
  size_t starter = std::u32string::npos;
  int last_class = -1;  // class of the last character kept after the starter; -1: none
  for (char32_t cp : d) {
    const int cc = combining_class(cp);
    if (starter != std::u32string::npos && (last_class == -1 || (last_class != 0 && last_class < cc))) {
      const char32_t c = compose(out[starter], cp);
      if (c != 0) {
        out[starter] = c;
        continue;
      }
    }
    if (cc == 0) {
      starter = out.size();
      last_class = -1;
    } else {
      last_class = cc;
    }
    out.push_back(cp);
  }
  return encode_utf8(out);
}

}  // namespace kvcim::cmodel::unicode
