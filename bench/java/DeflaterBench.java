import java.util.zip.Deflater;

/**
 * A Deflater-heavy workload: each iteration compresses a buffer with a new Deflater,
 * so zlib allocates and frees its state (about 256 KiB) every time.
 *   java DeflaterBench ITERATIONS   -> prints the seconds it took
 */
public class DeflaterBench {
  public static void main(String[] args) {
    int iterations = Integer.parseInt(args[0]);
    byte[] input = new byte[64 * 1024];
    for (int i = 0; i < input.length; i++) input[i] = (byte) (i * 31 % 251);
    byte[] output = new byte[input.length + 1024];
    long total = 0;
    long start = System.nanoTime();
    for (int i = 0; i < iterations; i++) {
      Deflater d = new Deflater(1);
      d.setInput(input);
      d.finish();
      total += d.deflate(output);
      d.end();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    if (total == 42) System.out.println("unlikely");
    System.out.println(seconds);
  }
}
