// Error messages are one line, whatever bytes of the input they quote: the CLI prints exactly
// one line on stderr, and scripts read it as such.
#include "kvcim/error.hpp"
#include "reliability_util.hpp"

using namespace kvcim;
using namespace kvcim::test;

TEST(ErrorMessage, ControlCharactersFromTheInputAreEscaped) {
  const Error e("file.yaml: key = 'a\nb\r\tc\x1b': expected text");
  const std::string m = e.what();
  EXPECT_ONE_LINE(m);
  EXPECT_EQ(m.find('\r'), std::string::npos) << m;
  EXPECT_EQ(m.find('\x1b'), std::string::npos) << m;
  // still readable: the escaped characters are shown, the rest untouched
  EXPECT_NE(m.find("a\\nb"), std::string::npos) << m;
  EXPECT_NE(m.find("file.yaml: key = "), std::string::npos) << m;
}

TEST(ErrorMessage, FailBuildsTheSameOneLineForm) {
  const std::string m = error_of([] { fail("f.bin", "piece", "x\ny", "expected z"); });
  EXPECT_EQ(m, "f.bin: piece = x\\ny: expected z");
}

TEST(ErrorMessage, NonAsciiTextIsKept) {
  const Error e("t.txt: word = caf\xC3\xA9: ok");
  EXPECT_EQ(std::string(e.what()), "t.txt: word = caf\xC3\xA9: ok");
}
