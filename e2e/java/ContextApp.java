import io.nmprof.Context;
import java.io.File;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * Threads serving "requests" with io.nmprof.Context: thread t serves route "/r<t>"
 * with span ids t*1000+i, allocating through Deflater in request(); between
 * requests it allocates through Inflater in idle(), outside any context.
 *   java -cp nmprof-api.jar:. ContextApp THREADS REQUESTS
 *   java -cp nmprof-api.jar:. ContextApp THREADS until STOP_FILE
 * The second form prints "ready" once io.nmprof.Context is in use (for nmprof attach)
 * and serves until STOP_FILE exists.
 */
public class ContextApp {
  static void request(int count) {
    for (int i = 0; i < count; i++) new Deflater(9).end();
  }

  static void idle(int count) {
    for (int i = 0; i < count; i++) new Inflater().end();
  }

  static void serve(int thread, int requests, File stop) {
    for (int i = 0; stop != null ? !stop.exists() : i < requests; i++) {
      long span = thread * 1000L + i % 999 + 1;  // thread = span / 1000
      Context.set(span, span);
      Context.setAttribute("route", "/r" + thread);
      Context.setAttribute("undeclared", "x");
      request(20);
      Context.clear();
      idle(20);
    }
  }

  public static void main(String[] args) throws Exception {
    int threads = Integer.parseInt(args[0]);
    boolean until = args[1].equals("until");
    int requests = until ? 0 : Integer.parseInt(args[1]);
    File stop = until ? new File(args[2]) : null;
    if (until) {
      Context.clear();  // the class is loaded and initialized before any agent comes
      System.out.println("ready");
      System.out.flush();
    }
    Thread[] workers = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      final int thread = t;
      workers[t] = new Thread(() -> serve(thread, requests, stop), "worker-" + t);
      workers[t].start();
    }
    for (Thread w : workers) w.join();
    System.out.println("served");
  }
}
