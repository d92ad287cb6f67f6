// The agent's own jni.h and jvmti.h against the JDK's (jdk_layout.h): a function at
// the wrong place in its table would call another one inside the JVM.
#include <gtest/gtest.h>

#include <cstring>

#include "agent/java/jni/jvmti.h"
#include "tests/hotspot/jdk_layout.h"

namespace {

#define JNI_INDEX(function) jni_index::function
#define JVMTI_NUMBER(function) jvmti_number::function
#define JAVA_VM_GET_ENV java_vm_index::GetEnv

JniLayout own_layout() {
#include "tests/hotspot/jni_layout.inc"
}

TEST(JniHeaders, FunctionsAreWhereTheJdkPutsThem) {
  JniLayout own = own_layout(), jdk = jdk_layout();
  EXPECT_EQ(own.jni_indices, jdk.jni_indices);
  EXPECT_EQ(own.java_vm_get_env, jdk.java_vm_get_env);
  EXPECT_EQ(own.jvmti_numbers, jdk.jvmti_numbers);
}

TEST(JniHeaders, ConstantsAndStructuresAgreeWithTheJdk) {
  JniLayout own = own_layout(), jdk = jdk_layout();
  EXPECT_EQ(own.constants, jdk.constants);
  EXPECT_EQ(own.offsets, jdk.offsets);
  EXPECT_EQ(own.sizes, jdk.sizes);
  EXPECT_EQ(own.line_numbers_capability, jdk.line_numbers_capability);
}

}  // namespace
