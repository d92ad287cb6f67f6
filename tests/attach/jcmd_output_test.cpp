// Reading the JDK version and a flag's origin from jcmd output (JEP 451 forecast).
#include <gtest/gtest.h>

#include "attach/dynamic_load_warning.h"

namespace nmprof::attach {
namespace {

TEST(JdkVersionFromVmVersion, TakesTheFeatureRelease) {
  EXPECT_EQ(jdk_version_from_vm_version("OpenJDK 64-Bit Server VM version 17.0.15+6-Debian-1deb12u1\nJDK 17.0.15\n"),
            17);
  EXPECT_EQ(jdk_version_from_vm_version("OpenJDK 64-Bit Server VM version 25.0.3+9-LTS\nJDK 25.0.3\n"), 25);
  EXPECT_EQ(jdk_version_from_vm_version("Java HotSpot(TM) 64-Bit Server VM version 25.392-b08\nJDK 8.0_392\n"), 8);
  EXPECT_EQ(jdk_version_from_vm_version("OpenJDK 64-Bit Server VM version 21-ea\nJDK 21\n"), 21);
  EXPECT_FALSE(jdk_version_from_vm_version("OpenJDK 64-Bit Server VM version 25.0.3+9-LTS\n"));
  EXPECT_FALSE(jdk_version_from_vm_version("JDK x\n"));
}

constexpr const char* kFlags =
    "[Global flags]\n"
    "     bool DisableAttachMechanism                   = false                                     {product} {default}\n"
    "     bool EnableDynamicAgentLoading                = true                                      {product} {command line}\n"
    "    uintx ErgoHeapSizeLimit                        = 0                                         {product} {default}\n"
    "   size_t MaxHeapSize                              = 67108864                                  {product} {command line}\n"
    "     bool UseSerialGC                              = true                                      {product} {environment}\n";

TEST(FlagFromVmFlags, ReadsValueAndOrigin) {
  auto flag = flag_from_vm_flags(kFlags, "EnableDynamicAgentLoading");
  ASSERT_TRUE(flag);
  EXPECT_EQ(flag->value, "true");
  EXPECT_EQ(flag->origin, "command line");
  auto other = flag_from_vm_flags(kFlags, "DisableAttachMechanism");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->value, "false");
  EXPECT_EQ(other->origin, "default");
  EXPECT_EQ(flag_from_vm_flags(kFlags, "UseSerialGC")->origin, "environment");
  EXPECT_FALSE(flag_from_vm_flags(kFlags, "EnableDynamic"));
  EXPECT_FALSE(flag_from_vm_flags(kFlags, "NoSuchFlag"));
}

}  // namespace
}  // namespace nmprof::attach
