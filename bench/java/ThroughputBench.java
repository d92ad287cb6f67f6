import java.util.zip.Deflater;

/**
 * Prints, once a second, how many Deflater iterations (new Deflater, compress 64 KiB,
 * end) it did in that second, forever: a JVM to attach to and measure before, while
 * and after profiling.
 */
public class ThroughputBench {
  public static void main(String[] args) {
    byte[] input = new byte[64 * 1024];
    for (int i = 0; i < input.length; i++) input[i] = (byte) (i * 31 % 251);
    byte[] output = new byte[input.length + 1024];
    long sink = 0;
    for (;;) {
      long end = System.nanoTime() + 1_000_000_000L;
      long count = 0;
      while (System.nanoTime() < end) {
        Deflater d = new Deflater(1);
        d.setInput(input);
        d.finish();
        sink += d.deflate(output);
        d.end();
        count++;
      }
      System.out.println(count + (sink == 42 ? 1 : 0));
      System.out.flush();
    }
  }
}
