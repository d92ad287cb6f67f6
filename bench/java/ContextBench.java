import io.nmprof.Context;

/**
 * ns per io.nmprof.Context call after warm-up: the fastest and the median of 15
 * timings of N calls each. Run it plain (no agent: the calls do nothing) and under
 * nmprof run --context-attributes route.
 *   java -cp nmprof-api.jar:. ContextBench N
 */
public class ContextBench {
  static long sink;

  static double[] time(Runnable calls, long n) {
    double[] runs = new double[15];
    for (int r = 0; r < runs.length; r++) {
      long start = System.nanoTime();
      calls.run();
      runs[r] = (System.nanoTime() - start) / (double) n;
    }
    java.util.Arrays.sort(runs);
    return new double[] {runs[0], runs[runs.length / 2]};
  }

  public static void main(String[] args) {
    long n = Long.parseLong(args[0]);
    String[] routes = {"/checkout", "/search"};
    Runnable set = () -> {
      for (long i = 0; i < n; i++) Context.set(i, i);
    };
    Runnable attribute = () -> {
      for (long i = 0; i < n; i++) Context.setAttribute("route", routes[(int) (i & 1)]);
    };
    Runnable clear = () -> {
      for (long i = 0; i < n; i++) Context.clear();
    };
    for (int warm = 0; warm < 3; warm++) {
      set.run();
      attribute.run();
      clear.run();
    }
    double[] s = time(set, n), a = time(attribute, n), c = time(clear, n);
    System.out.printf("set %.2f %.2f%nsetAttribute %.2f %.2f%nclear %.2f %.2f%n", s[0], s[1], a[0], a[1], c[0], c[1]);
  }
}
