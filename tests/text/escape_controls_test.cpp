// escape_controls: what a recorded program names reaches a terminal or a line format
// with no control character and no malformed UTF-8, and nothing else changed.
#include <gtest/gtest.h>

#include "formats/text/utf8.h"

namespace nmprof::text {
namespace {

TEST(EscapeControls, KeepsPrintableTextWhole) {
  EXPECT_EQ(escape_controls("std::vector<int>::push_back (a.cc:12) \\ ;"), "std::vector<int>::push_back (a.cc:12) \\ ;");
  EXPECT_EQ(escape_controls("naïve 日本 🙂"), "naïve 日本 🙂");
  EXPECT_EQ(escape_controls(""), "");
}

TEST(EscapeControls, EscapesC0AndDel) {
  EXPECT_EQ(escape_controls("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(escape_controls("frame\nmain;fake 999"), "frame\\x0amain;fake 999");
  EXPECT_EQ(escape_controls(std::string_view("\0\t\r\x7f", 4)), "\\x00\\x09\\x0d\\x7f");
}

TEST(EscapeControls, EscapesC1AsItsBytes) {
  EXPECT_EQ(escape_controls("x\xc2\x9b" "31m"), "x\\xc2\\x9b31m");  // CSI
  EXPECT_EQ(escape_controls("\xc2\x85"), "\\xc2\\x85");            // NEL
  EXPECT_EQ(escape_controls("\xc2\xa0"), "\xc2\xa0");              // no-break space: not a control
}

TEST(EscapeControls, EscapesEveryByteOfMalformedUtf8) {
  EXPECT_EQ(escape_controls("\xff"), "\\xff");
  EXPECT_EQ(escape_controls("a\xe2\x82"), "a\\xe2\\x82");         // cut short
  EXPECT_EQ(escape_controls("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(escape_controls("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(escape_controls("\x9b" "2J"), "\\x9b2J");              // a lone C1 byte: a CSI to some terminals
}

}  // namespace
}  // namespace nmprof::text
