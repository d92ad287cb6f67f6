// `nmprof run -- java ...`: the agent, preloaded into the java launcher, adds itself
// to the JVM's options (-agentpath) when the launcher looks up JNI_CreateJavaVM, so
// the JVM loads it as a JVMTI agent. Works for any program that embeds a JVM, needs
// no JAVA_TOOL_OPTIONS (and so prints no "Picked up" line), and leaves a launch that
// already names the agent alone.
#pragma once

namespace nmprof {

// The JNI_CreateJavaVM that dlsym found: returns what the caller should get instead.
void* wrap_create_java_vm(void* real);

}  // namespace nmprof
