// The attach request and the agent's reply, as the agent and the CLI exchange them.
#include "protocol/attach_request.h"

#include <gtest/gtest.h>

namespace nmprof {
namespace {

TEST(AttachRequest, CarriesReplyPathAndTokenExactly) {
  AttachRequest request{AttachCommand::Stop, {}};
  request.options.reply = "/tmp/nmprof-reply-abc";
  request.options.token = "0123456789abcdefghijklmnop";
  AttachRequest back;
  ASSERT_FALSE(parse_attach_request(format_attach_request(request), back));
  EXPECT_EQ(back.command, AttachCommand::Stop);
  EXPECT_EQ(back.options.reply, request.options.reply);
  EXPECT_EQ(back.options.token, request.options.token);
}

TEST(AttachReply, RoundTripsAndKeepsOneValuePerLine) {
  AttachReply reply{{"result", "ok"}, {"file", "/tmp/a=b.jfr"}, {"message", "two\nlines"}};
  AttachReply back = parse_attach_reply(format_attach_reply(reply));
  EXPECT_EQ(back.at("result"), "ok");
  EXPECT_EQ(back.at("file"), "/tmp/a=b.jfr");
  EXPECT_EQ(back.at("message"), "two lines");
}

// Issue 15, finding 3: escape sequences in a reply never reach the terminal.
TEST(AttachReply, ControlCharactersBecomeQuestionMarks) {
  AttachReply back = parse_attach_reply("file=/tmp/\x1b]0;owned\x07\x1b[2J.jfr\r\nresult=ok\x7f\n");
  EXPECT_EQ(back.at("file"), "/tmp/?]0;owned??[2J.jfr?");
  EXPECT_EQ(back.at("result"), "ok?");
}

TEST(AttachReply, CountsAreNumbersOrNothing) {
  AttachReply reply = parse_attach_reply("live_bytes=1e999\nsamples=42\nlost=-1\nhuge=99999999999999999999999\n"
                                         "empty=\n");
  EXPECT_EQ(reply_count(reply, "samples"), 42u);
  for (const char* bad : {"live_bytes", "lost", "huge", "empty", "missing"})
    EXPECT_FALSE(reply_count(reply, bad).has_value()) << bad;
}

// Whatever bytes a reply holds, parsing it neither fails nor lets a control through.
TEST(AttachReply, RandomBytesParseSafely) {
  unsigned seed = 7;
  for (int round = 0; round < 2000; round++) {
    std::string text;
    size_t length = (seed = seed * 1103515245 + 12345) % 200;
    for (size_t i = 0; i < length; i++) text += static_cast<char>((seed = seed * 1103515245 + 12345) >> 16);
    for (const auto& [key, value] : parse_attach_reply(text)) {
      for (char c : key + value) ASSERT_TRUE(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) << text;
      (void)reply_count({{key, value}}, key);
    }
  }
}

}  // namespace
}  // namespace nmprof
