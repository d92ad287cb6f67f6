// Calls the probe (frames_probe.cpp) from frames of known kinds and prints, per
// scenario, "RESULT <scenario> <report>": the probe's frames with their types.
// The test's JVM options pin down how each method runs: methods named i* are
// excluded from compilation (always interpreted), c* are compiled once warm and
// never inlined, n* are always inlined into their compiled caller.
public class FramesTarget {
  // Probe modes: 0 classifies only (warm-up); 1 records the frames; n > 1 records
  // at most n frames.
  static final int GIVE_UP = -1;     // records how classify answers for altered frames
  static final int DEOPTIMIZE = -2;  // calls iLoadSubclass() first, then records
  static final int BENCH = -3;       // records the time classify takes

  static native int probe(int mode);
  // What the last recording found.
  static native String report();
  // Calls cUpcallTarget(mode) from C through JNI.
  static native int upcall(int mode);
  // Blocks a thread in native code until release() (its JNIEnv is not ours).
  static native void parkInNative();
  static native void release();
  // Warm-up classifications: "ok=N failed=M".
  static native String warmupReport();

  static final int WARMUP = 20000;
  static final int DEEP = 8;
  static final int OSR_LOOP = 100000;
  static int sink;

  public static void main(String[] args) throws Exception {
    for (String scenario : args) {
      run(scenario);
      System.out.println("RESULT " + scenario + " " + report());
    }
    System.out.println("WARMUP " + warmupReport());
  }

  static void run(String scenario) throws Exception {
    switch (scenario) {
      case "interpreted": iInterpretedCaller(); break;
      case "compiled": iDriveCompiled(1); break;
      case "inlined": iDriveInlined(); break;
      case "inlined2": iDriveInlined2(); break;
      case "deep": iDriveDeep(DEEP, 1); break;
      case "truncated": iDriveDeep(DEEP, 5); break;
      case "upcall": iDriveUpcall(); break;
      case "osr": cOsrLoop(); break;
      case "deoptimized": iDriveDeoptimized(); break;
      case "virtual": iVirtual(); break;
      case "giveup": iGiveUp(); break;
      case "bench": iDriveDeep(6, BENCH); break;
      default: throw new IllegalArgumentException(scenario);
    }
  }

  // (a) interpreted all the way
  static void iInterpretedCaller() { iInterpretedLeaf(); }
  static void iInterpretedLeaf() { probe(1); }

  // (b) a compiled method calling the native probe
  static void iDriveCompiled(int mode) {
    for (int i = 0; i < WARMUP; i++) cLeaf(0);
    cLeaf(mode);
  }
  static void cLeaf(int mode) {
    sink += mode;
    probe(mode);
  }

  // (c) small methods inlined into a compiled caller
  static void iDriveInlined() {
    for (int i = 0; i < WARMUP; i++) cInlineCaller(0);
    cInlineCaller(1);
  }
  static void cInlineCaller(int mode) { nInlined(mode); }
  static void nInlined(int mode) { probe(mode); }

  static void iDriveInlined2() {
    for (int i = 0; i < WARMUP; i++) cInlineCaller2(0);
    cInlineCaller2(1);
  }
  static void cInlineCaller2(int mode) { nOuter(mode); }
  static void nOuter(int mode) { nInner(mode); }
  static void nInner(int mode) { probe(mode); }

  // (d) a deep chain: compiled, inlined and interpreted frames in turn
  static void iDriveDeep(int depth, int mode) {
    for (int i = 0; i < WARMUP / depth; i++) cDeep(depth, 0);
    cDeep(depth, mode);
  }
  static void cDeep(int depth, int mode) { nDeepStep(depth, mode); }
  static void nDeepStep(int depth, int mode) { iDeepHop(depth, mode); }
  static void iDeepHop(int depth, int mode) {
    if (depth > 1) {
      cDeep(depth - 1, mode);
    } else {
      probe(mode);
    }
  }

  // Java entered again from C (an entry frame between the Java frames)
  static void iDriveUpcall() {
    for (int i = 0; i < WARMUP; i++) cUpcallCaller(0);
    cUpcallCaller(1);
  }
  static void cUpcallCaller(int mode) { upcall(mode); }
  static int cUpcallTarget(int mode) { return probe(mode); }

  // A loop compiled while it runs (on-stack replacement); the last iteration
  // records, without a branch that compiled code might not expect.
  static void cOsrLoop() {
    for (int i = 0; i < OSR_LOOP; i++) probe((i + 1) / OSR_LOOP);
  }

  // A compiled frame deoptimized while it waits for the probe: loading Sub breaks
  // the class hierarchy assumption under which cDeoptimized inlined base.hook().
  static class Base {
    int hook() { return 1; }
  }
  static class Sub extends Base {
    @Override
    int hook() { return 2; }
  }
  static Base base = new Base();

  static void iDriveDeoptimized() {
    for (int i = 0; i < WARMUP; i++) cDeoptimized(0);
    cDeoptimized(DEOPTIMIZE);
  }
  static void cDeoptimized(int mode) {
    sink += base.hook();
    probe(mode);
  }
  static void iLoadSubclass() { sink += new Sub().hook(); }

  // A virtual thread (JDK 21+), whose frames sit on its carrier thread's stack.
  static void iVirtual() throws Exception {
    Runnable body = FramesTarget::iVirtualBody;
    Thread thread = (Thread) Thread.class.getMethod("startVirtualThread", Runnable.class).invoke(null, body);
    thread.join();
  }
  static void iVirtualBody() { probe(1); }

  // Frames the classifier must refuse, tried from a compiled caller
  static void iGiveUp() throws Exception {
    Thread parked = new Thread(FramesTarget::parkInNative);
    parked.start();
    iDriveCompiled(GIVE_UP);
    release();
    parked.join();
  }
}
