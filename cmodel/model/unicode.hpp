// Code points for the tokenizer.json pipeline: UTF-8 in and out (a byte that starts no valid
// UTF-8 sequence is carried as the code point kRawByte + byte, so byte-level tokenizers see the
// text's bytes unchanged), the classes the pre-tokenizers' regexes use, and NFC.
#pragma once
#include <string>

namespace kvcim::cmodel::unicode {

inline constexpr char32_t kRawByte = 0x110000;  // kRawByte + b: the lone byte b

std::u32string decode_utf8(const std::string& s);
void append_utf8(std::string& out, char32_t cp);
std::string encode_utf8(const std::u32string& s);

bool is_letter(char32_t cp);  // \p{L}
bool is_number(char32_t cp);  // \p{N}
bool is_space(char32_t cp);   // \s: White_Space, as Oniguruma (Hugging Face's regex engine)

// Canonical composition (Unicode NFC): decomposition, canonical ordering, composition.
std::string nfc(const std::string& s);

}  // namespace kvcim::cmodel::unicode
