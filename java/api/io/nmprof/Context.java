package io.nmprof;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Ties the native allocations of a thread to the request it is serving: every
 * profiler.Malloc sample nmprof takes on this thread carries the span ids and the
 * attributes set here. Without the nmprof agent in the JVM every method returns at
 * once; when nmprof attaches to the JVM later, the agent tells this class so.
 *
 * <p>The context lives in native memory of the thread (nmprof.h's context block),
 * which this class writes directly through a direct buffer: no JNI call per update.
 * Attribute names must be declared when recording starts (--context-attributes);
 * other names are ignored and counted. Values are cut at 63 bytes of UTF-8.
 */
public final class Context {
  // nmprof.h's struct nmprof_context_block (NMPROF_CONTEXT_ABI 1).
  private static final int SPAN_ID = 0;
  private static final int LOCAL_ROOT_SPAN_ID = 8;
  private static final int VALUE_LENGTHS = 24;
  private static final int VALUES = 32;
  private static final int VALUE_SIZE = 64;

  private static volatile boolean agent = probe();  // also set by the agent when it attaches
  private static final ThreadLocal<ByteBuffer> BLOCK = ThreadLocal.withInitial(Context::blockOfThisThread);
  private static final ConcurrentHashMap<String, Integer> ATTRIBUTE_INDEX = new ConcurrentHashMap<>();

  private Context() {}

  /** The span the thread works for now and the root span of its request in this process (0: none). */
  public static void set(long spanId, long localRootSpanId) {
    ByteBuffer block = block();
    if (block == null) return;
    block.putLong(SPAN_ID, spanId);
    block.putLong(LOCAL_ROOT_SPAN_ID, localRootSpanId);
  }

  /** Sets one declared attribute of the thread's context; null clears it. */
  public static void setAttribute(String name, String value) {
    ByteBuffer block = block();
    if (block == null || name == null) return;
    int index = attributeIndex(name);
    if (index < 0) return;
    int length = 0;
    if (value != null) {
      byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
      length = Math.min(bytes.length, VALUE_SIZE - 1);
      int at = VALUES + index * VALUE_SIZE;
      for (int i = 0; i < length; i++) block.put(at + i, bytes[i]);
    }
    block.put(VALUE_LENGTHS + index, (byte) length);
  }

  /** No span and no attributes: the thread serves no request. */
  public static void clear() {
    ByteBuffer block = block();
    if (block == null) return;
    block.putLong(SPAN_ID, 0);
    block.putLong(LOCAL_ROOT_SPAN_ID, 0);
    block.putLong(VALUE_LENGTHS, 0);  // the eight value lengths
  }

  private static ByteBuffer block() {
    return agent ? BLOCK.get() : null;
  }

  private static int attributeIndex(String name) {
    Integer index = ATTRIBUTE_INDEX.get(name);
    if (index != null) return index;
    int found = attributeIndex0(name);
    if (found >= 0) ATTRIBUTE_INDEX.put(name, found);  // undeclared names are counted by each call
    return found;
  }

  private static boolean probe() {
    try {
      return abi0() == 1;
    } catch (UnsatisfiedLinkError noAgent) {
      return false;
    }
  }

  private static ByteBuffer blockOfThisThread() {
    ByteBuffer block = block0();
    return block == null ? null : block.order(ByteOrder.nativeOrder());
  }

  // Implemented by the agent (libnmprof.so), found by the JVM among its agent libraries.
  private static native int abi0();

  private static native ByteBuffer block0();

  private static native int attributeIndex0(String name);
}
