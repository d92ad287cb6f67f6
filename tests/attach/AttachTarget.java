// The JVM the attach tests attach to: announces that main() runs, then sleeps
// until the test kills it.
public class AttachTarget {
  public static void main(String[] args) throws InterruptedException {
    System.out.println("ready");
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
