import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.Deflater;

/**
 * A JVM to attach to: allocates native memory in a loop at known methods until
 * SECONDS have passed (or the file STOP exists), then prints its result.
 *   java AttachTarget SECONDS STOP [LOAD]
 * When the file LOAD appears, it loads the JNI library jni_alloc and calls it too.
 */
public class AttachTarget {
  static native void jniAllocate(int count, int size);

  static long compressLoop() {
    Deflater d = new Deflater(6);
    d.end();
    return 1;
  }

  static long directLoop() {
    ByteBuffer b = ByteBuffer.allocateDirect(64 * 1024);
    return b.capacity() > 0 ? 1 : 0;
  }

  public static void main(String[] args) throws Exception {
    long end = System.currentTimeMillis() + Long.parseLong(args[0]) * 1000;
    Path stop = Path.of(args[1]);
    Path load = args.length > 2 ? Path.of(args[2]) : null;
    boolean loaded = false;
    long work = 0;
    System.out.println("ready");
    System.out.flush();
    while (System.currentTimeMillis() < end && !Files.exists(stop)) {
      for (int i = 0; i < 20; i++) work += compressLoop() + directLoop();
      if (load != null && !loaded && Files.exists(load)) {
        System.loadLibrary("jni_alloc");
        loaded = true;
      }
      if (loaded) jniAllocate(100, 20000);
      Thread.sleep(2);
    }
    System.out.println("done " + (work > 0));
  }
}
