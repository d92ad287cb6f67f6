import java.util.zip.Deflater;

/**
 * A JVM service's steady native allocation for a long run: every 10 ms, 20 Deflaters
 * (zlib's quarter of a MiB each) made and ended, for SECONDS; prints how many.
 *   java -cp . PacedDeflater SECONDS
 */
public class PacedDeflater {
  public static void main(String[] args) throws Exception {
    long end = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9);
    long streams = 0;
    for (long tick = System.nanoTime(); tick < end; tick += 10_000_000) {
      for (int i = 0; i < 20; i++, streams++) new Deflater(9).end();
      long wait = tick + 10_000_000 - System.nanoTime();
      if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
    }
    System.out.println(streams);
  }
}
