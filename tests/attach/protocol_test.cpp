// The attach protocol's bytes, checked against replies recorded from JDK 17 and 25
// (docs: /work/shared/specs/jvm-attach.md, sections 6-8).
#include "attach/protocol.h"

#include <gtest/gtest.h>

namespace nmprof::attach {
namespace {

using namespace std::string_literals;

TEST(EncodeRequest, SendsVersionCommandAndExactlyThreeArguments) {
  auto request = encode_request("jcmd", {"VM.version", "", ""});
  ASSERT_TRUE(request) << request.error().message;
  EXPECT_EQ(*request, "1\0jcmd\0VM.version\0\0\0"s);
}

TEST(EncodeRequest, KeepsOptionsVerbatim) {
  auto request = encode_request("load", {"/opt/lib a.so", "true", "rc=5,file=/tmp/x y.jfr"});
  ASSERT_TRUE(request) << request.error().message;
  EXPECT_EQ(*request, "1\0load\0/opt/lib a.so\0true\0rc=5,file=/tmp/x y.jfr\0"s);
}

TEST(EncodeRequest, RejectsWhatTheJvmWouldDropSilently) {
  EXPECT_TRUE(encode_request("load", {std::string(1024, 'a'), "", ""}));
  auto too_long = encode_request("load", {std::string(1025, 'a'), "", ""});
  ASSERT_FALSE(too_long);
  EXPECT_NE(too_long.error().message.find("1025 bytes"), std::string::npos) << too_long.error().message;
  EXPECT_NE(too_long.error().message.find("at most 1024"), std::string::npos) << too_long.error().message;

  EXPECT_FALSE(encode_request("a_command_of_17ch", {"", "", ""}));
  auto with_nul = encode_request("load", {"/lib.so", "true", "a\0b"s});
  ASSERT_FALSE(with_nul);
  EXPECT_NE(with_nul.error().message.find("NUL"), std::string::npos);
}

TEST(ParseReply, SplitsResultCodeFromText) {
  auto reply = parse_reply("0\nOpenJDK 64-Bit Server VM version 17.0.15\nJDK 17.0.15\n");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->code, 0);
  EXPECT_EQ(reply->text, "OpenJDK 64-Bit Server VM version 17.0.15\nJDK 17.0.15\n");

  auto unknown = parse_reply("-1\nOperation bogus not recognized!");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->code, -1);
  EXPECT_EQ(unknown->text, "Operation bogus not recognized!");

  auto version_mismatch = parse_reply("101\n");
  ASSERT_TRUE(version_mismatch);
  EXPECT_EQ(version_mismatch->code, 101);
  EXPECT_EQ(version_mismatch->text, "");
}

TEST(ParseReply, RejectsBytesWithoutResultLine) {
  EXPECT_FALSE(parse_reply(""));
  EXPECT_FALSE(parse_reply("\n0\n"));
  EXPECT_FALSE(parse_reply("return code: 0\n"));
  EXPECT_FALSE(parse_reply("0x\n"));
}

LoadReply load(std::string_view bytes) {
  auto reply = parse_reply(bytes);
  EXPECT_TRUE(reply) << bytes;
  return reply ? parse_load_reply(*reply) : LoadReply{};
}

TEST(ParseLoadReply, AgentResultFromJdk9AndLater) {
  EXPECT_EQ(load("0\nreturn code: 0\n").agent_code, 0);
  EXPECT_EQ(load("0\nreturn code: 42\n").agent_code, 42);
  EXPECT_EQ(load("0\nreturn code: -3\n").agent_code, -3);
}

TEST(ParseLoadReply, AgentResultFromJdk8) {
  EXPECT_EQ(load("0\n0\n").agent_code, 0);
  EXPECT_EQ(load("0\n7\n").agent_code, 7);
}

TEST(ParseLoadReply, FailureWithResultCodeBeforeJdk21) {
  LoadReply reply = load(
      "-1\n/nonexistent/libx.so was not loaded.\n/nonexistent/libx.so: cannot open shared object file: No such "
      "file or directory\n");
  EXPECT_FALSE(reply.agent_code);
  EXPECT_EQ(reply.reason,
            "/nonexistent/libx.so was not loaded.\n/nonexistent/libx.so: cannot open shared object file: No such file "
            "or directory\n");
  LoadReply disabled =
      load("-1\nDynamic agent loading is not enabled. Use -XX:+EnableDynamicAgentLoading to launch target VM.");
  EXPECT_FALSE(disabled.agent_code);
  EXPECT_EQ(disabled.reason, "Dynamic agent loading is not enabled. Use -XX:+EnableDynamicAgentLoading to launch target VM.");
}

TEST(ParseLoadReply, FailureInTextFromJdk21On) {
  LoadReply missing = load("0\nAgent_OnAttach is not available in /tmp/att/libnoagent.so\n");
  EXPECT_FALSE(missing.agent_code);
  EXPECT_EQ(missing.reason, "Agent_OnAttach is not available in /tmp/att/libnoagent.so\n");
  LoadReply disabled =
      load("0\nDynamic agent loading is not enabled. Use -XX:+EnableDynamicAgentLoading to launch target VM.\n");
  EXPECT_FALSE(disabled.agent_code);
}

TEST(ParseLoadReply, MalformedReturnCodeIsAFailure) {
  LoadReply reply = load("0\nreturn code: many\n");
  EXPECT_FALSE(reply.agent_code);
  EXPECT_EQ(reply.reason, "return code: many\n");
}

TEST(OneLine, JoinsLinesWithSingleSpaces) {
  EXPECT_EQ(one_line("a.so was not loaded.\na.so: cannot open\n"), "a.so was not loaded. a.so: cannot open");
  EXPECT_EQ(one_line("  x \n\n y\t"), "x y");
  EXPECT_EQ(one_line(""), "");
}

}  // namespace
}  // namespace nmprof::attach
