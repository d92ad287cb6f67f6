// What nmprof reads about a target from /proc before attaching.
#include <unistd.h>

#include <gtest/gtest.h>

#include "attach/proc_status.h"
#include "attach/target_process.h"
#include "attach/vm_detection.h"

namespace nmprof::attach {
namespace {

using namespace std::string_literals;

constexpr const char* kJvmInContainer =
    "Name:\tjava\n"
    "Umask:\t0022\n"
    "State:\tS (sleeping)\n"
    "Tgid:\t24467\n"
    "NStgid:\t24467\t1\n"
    "Pid:\t24467\n"
    "PPid:\t24466\n"
    "Uid:\t1001\t1002\t1003\t1004\n"
    "Gid:\t2001\t2002\t2003\t2004\n"
    "Groups:\t27 100 \n"
    "NSpid:\t24467\t1\n"
    "SigQ:\t0/63457\n"
    "SigPnd:\t0000000000000000\n"
    "SigBlk:\t0000000000000000\n"
    "SigIgn:\t0000000000000000\n"
    "SigCgt:\t2000000181005ccf\n";

TEST(ParseProcessStatus, ReadsEffectiveIdsGroupsNamespacePidAndSignals) {
  auto status = parse_process_status(kJvmInContainer);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->euid, 1002u);
  EXPECT_EQ(status->egid, 2002u);
  EXPECT_EQ(status->groups, (std::vector<gid_t>{27, 100}));
  EXPECT_EQ(status->nspid, 1);
  EXPECT_TRUE(status->catches(3));   // SIGQUIT: bit 2 of 0x...cf
  EXPECT_FALSE(status->catches(6));  // SIGABRT: bit 5 is clear
}

TEST(ParseProcessStatus, IgnoredSignalIsNotCaught) {
  std::string text = kJvmInContainer;
  text.replace(text.find("SigIgn:\t0000000000000000"), 24, "SigIgn:\t0000000000000004");
  auto status = parse_process_status(text);
  ASSERT_TRUE(status);
  EXPECT_FALSE(status->catches(3));
}

TEST(ParseProcessStatus, OldKernelWithoutNSpid) {
  std::string text = kJvmInContainer;
  text.erase(text.find("NSpid:"), std::string("NSpid:\t24467\t1\n").size());
  auto status = parse_process_status(text);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->nspid, 0);
}

TEST(ParseProcessStatus, RejectsMissingOrMalformedIds) {
  std::string text = kJvmInContainer;
  EXPECT_FALSE(parse_process_status(text.substr(0, text.find("Gid:"))));
  text.replace(text.find("Uid:\t1001"), 9, "Uid:\tabcd");
  EXPECT_FALSE(parse_process_status(text));
}

TEST(InspectProcess, DescribesThisProcess) {
  auto self = inspect_process(getpid());
  ASSERT_TRUE(self) << self.error().message;
  EXPECT_EQ(self->status.euid, geteuid());
  EXPECT_EQ(self->status.egid, getegid());
  EXPECT_GT(self->nspid, 0);
  EXPECT_FALSE(self->name.empty());
  EXPECT_TRUE(check_attach_permission(*self));
}

TEST(VmKindFromMaps, RecognisesHotSpotAndOpenJ9) {
  std::string hotspot =
      "7f4c1c000000-7f4c1d000000 r-xp 00000000 fe:01 1234   /usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so\n"
      "7f4c1e000000-7f4c1e100000 r--p 00000000 fe:01 99     /usr/lib/x86_64-linux-gnu/libc.so.6\n";
  EXPECT_EQ(vm_kind_from_maps(hotspot), VmKind::hotspot);
  std::string openj9 =
      "7f0000000000-7f0000100000 r-xp 00000000 fe:01 1 /opt/openj9/lib/server/libjvm.so\n"
      "7f0000200000-7f0000300000 r-xp 00000000 fe:01 2 /opt/openj9/lib/default/libj9vm29.so\n";
  EXPECT_EQ(vm_kind_from_maps(openj9), VmKind::openj9);
  std::string native =
      "55d0c0000000-55d0c0001000 r-xp 00000000 fe:01 7 /usr/bin/sleep\n"
      "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n"
      "7ffd00030000-7ffd00031000 rw-p 00000000 00:00 0\n";
  EXPECT_EQ(vm_kind_from_maps(native), VmKind::none);
  EXPECT_EQ(vm_kind_from_maps("7f00-7f01 r-xp 00000000 fe:01 3 /home/x/libjvm.so.bak\n"), VmKind::none);
}

TEST(MapsContainFile, MatchesTheWholePathname) {
  std::string maps = "7f00-7f01 r-xp 00000000 fe:01 3   /opt/nmprof/lib/libnmprof.so\n";
  EXPECT_TRUE(maps_contain_file(maps, "/opt/nmprof/lib/libnmprof.so"));
  EXPECT_FALSE(maps_contain_file(maps, "/lib/libnmprof.so"));
  EXPECT_FALSE(maps_contain_file(maps, "/opt/nmprof/lib/libnmprof"));
}

TEST(AttachDisabledByOptions, LastSettingWins) {
  std::string no_environment;
  EXPECT_FALSE(attach_disabled_by_options("java\0-cp\0.\0Main\0"s, no_environment));
  EXPECT_TRUE(attach_disabled_by_options("java\0-XX:+DisableAttachMechanism\0Main\0"s, no_environment));
  EXPECT_FALSE(attach_disabled_by_options(
      "java\0-XX:+DisableAttachMechanism\0-XX:-DisableAttachMechanism\0Main\0"s, no_environment));
  // JAVA_TOOL_OPTIONS comes before the command line, _JAVA_OPTIONS after it.
  EXPECT_TRUE(attach_disabled_by_options("java\0Main\0"s, "HOME=/\0JAVA_TOOL_OPTIONS=-Xmx1g -XX:+DisableAttachMechanism\0"s));
  EXPECT_FALSE(attach_disabled_by_options("java\0-XX:-DisableAttachMechanism\0Main\0"s,
                                          "JAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism\0"s));
  EXPECT_TRUE(attach_disabled_by_options("java\0-XX:-DisableAttachMechanism\0Main\0"s,
                                         "_JAVA_OPTIONS=-XX:+DisableAttachMechanism\0"s));
  EXPECT_TRUE(attach_disabled_by_options("java\0Main\0"s, "JDK_JAVA_OPTIONS=-XX:+DisableAttachMechanism\0"s));
  EXPECT_FALSE(attach_disabled_by_options("java\0Main\0"s, "XJAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism\0"s));
}

}  // namespace
}  // namespace nmprof::attach
