// The HTML report's escaping (markup, quotes, control characters, bytes that are not UTF-8) and
// its refusal of what is not a run report. The page itself: python/tests/test_html_report.py and,
// in a browser, testbench/cli/html_report.sh.
#include <gtest/gtest.h>

#include "kvcim/error.hpp"
#include "kvcim/runtime/html_report.hpp"

using kvcim::runtime::html_escape;
using kvcim::runtime::html_report;

TEST(HtmlReport, EscapesMarkupAndQuotes) {
  EXPECT_EQ(html_escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
  EXPECT_EQ(html_escape("line\n\ttab"), "line\n\ttab");
}

TEST(HtmlReport, ControlCharactersAndInvalidUtf8BecomeReplacementCharacters) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(html_escape(std::string("a\x01" "b\x7f", 4)), "a" + fffd + "b" + fffd);
  EXPECT_EQ(html_escape(std::string("\0", 1)), fffd);
  EXPECT_EQ(html_escape("\xC3\xA9\xE2\x80\x94\xF0\x9F\x98\x80"), "\xC3\xA9\xE2\x80\x94\xF0\x9F\x98\x80");  // valid
  EXPECT_EQ(html_escape("\xFF"), fffd);                       // never valid
  EXPECT_EQ(html_escape("\x80x"), fffd + "x");                // lone continuation byte
  EXPECT_EQ(html_escape("\xC0\xAF"), fffd + fffd);            // overlong '/'
  EXPECT_EQ(html_escape("\xED\xA0\x80"), fffd + fffd + fffd); // surrogate
  EXPECT_EQ(html_escape("\xE2\x80"), fffd + fffd);            // cut sequence
}

TEST(HtmlReport, RefusesWhatIsNotARunReport) {
  EXPECT_THROW(html_report(nlohmann::json::object()), kvcim::Error);
  EXPECT_THROW(html_report({{"schema_version", 2}}), kvcim::Error);
  try {
    html_report({{"schema_version", 1}});
    FAIL() << "a report without fields was accepted";
  } catch (const kvcim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("energy"), std::string::npos) << e.what();
  }
}
