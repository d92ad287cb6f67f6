import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * Native memory through the paths JVM services use, each from its own method on its
 * own named thread, with known sizes: java NativeMemoryApp MODE COUNT SIZE
 * Modes: deflater, inflater, direct, unsafe, jni, direct-live (keeps COUNT buffers
 * and releases COUNT more to their Cleaner), exit (deflater, then System.exit(3)),
 * wait (deflater, then prints "ready" and waits to be stopped). Prints the bytes it
 * allocated.
 */
public class NativeMemoryApp {
  static native void jniAllocate(int count, int size);

  static final List<Object> kept = new ArrayList<>();

  static void deflate(int count) {
    for (int i = 0; i < count; i++) {
      Deflater d = new Deflater(9);
      d.end();
    }
  }

  static void inflate(int count) {
    for (int i = 0; i < count; i++) {
      Inflater inflater = new Inflater();
      inflater.end();
    }
  }

  static void direct(int count, int size) {
    for (int i = 0; i < count; i++) kept.add(ByteBuffer.allocateDirect(size));
    kept.clear();
  }

  static void unsafe(int count, int size) throws Exception {
    Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
    f.setAccessible(true);
    sun.misc.Unsafe u = (sun.misc.Unsafe) f.get(null);
    for (int i = 0; i < count; i++) u.freeMemory(u.allocateMemory(size));
  }

  static void jni(int count, int size) {
    jniAllocate(count, size);
  }

  static void retainDirect(int count, int size) {
    for (int i = 0; i < count; i++) kept.add(ByteBuffer.allocateDirect(size));
  }

  static void releaseDirect(int count, int size) {
    List<ByteBuffer> dropped = new ArrayList<>();
    for (int i = 0; i < count; i++) dropped.add(ByteBuffer.allocateDirect(size));
    dropped.clear();
  }

  // Waits until the Cleaner freed the released buffers: only the kept ones remain.
  static void awaitCleaner(long keptBytes) throws Exception {
    java.lang.management.BufferPoolMXBean pool = null;
    for (java.lang.management.BufferPoolMXBean p :
         java.lang.management.ManagementFactory.getPlatformMXBeans(java.lang.management.BufferPoolMXBean.class))
      if (p.getName().equals("direct")) pool = p;
    for (int i = 0; i < 200 && pool.getMemoryUsed() > keptBytes; i++) {
      System.gc();
      Thread.sleep(20);
    }
    if (pool.getMemoryUsed() > keptBytes) throw new IllegalStateException("the Cleaner did not run");
  }

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    int count = Integer.parseInt(args[1]);
    int size = args.length > 2 ? Integer.parseInt(args[2]) : 0;
    if (mode.equals("jni")) System.loadLibrary("jni_alloc");
    Thread worker = new Thread(() -> {
      try {
        switch (mode) {
          case "deflater": deflate(count); break;
          case "inflater": inflate(count); break;
          case "direct": direct(count, size); break;
          case "unsafe": unsafe(count, size); break;
          case "jni": jni(count, size); break;
          case "exit":
            deflate(count);
            System.out.println("exiting");
            System.exit(3);
            break;
          case "wait":
            deflate(count);
            System.out.println("ready");
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
            break;
          case "direct-live":
            retainDirect(count, size);
            releaseDirect(count, size);
            awaitCleaner((long) count * size);
            break;
          default: throw new IllegalArgumentException(mode);
        }
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    }, "alloc-" + mode);
    worker.start();
    worker.join();
    System.out.println((long) count * size);
  }
}
