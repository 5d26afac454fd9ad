// A real Apache Curator peer for distlock's ZooKeeper lock: interop tests and
// benchmarks run it as a separate process and talk to it through a line
// protocol on stdin and stdout (tests/support/curator_peer.hpp drives it).
//
//   java -cp <classes>:<jars> CuratorPeer <connectString> <mode> args...
//
// It connects one CuratorFramework (ExponentialBackoffRetry) and prints
// "CONNECTED" once connected; then, by mode:
//
//   hold <path>    InterProcessMutex(path).acquire(), then "ACQUIRED <its own
//                  lock node's full path>"; then reads commands from stdin:
//                    release  releases, prints "RELEASED"
//                    exit     exits without releasing (the client is closed,
//                             so its session ends and ZooKeeper deletes the
//                             lock node)
//                  EOF on stdin releases (if still held), prints "RELEASED"
//                  and exits. After "release" only "exit" or EOF remain.
//   wait <path>    as hold, but prints "WAITING" right before acquire().
//   try <path> <ms>
//                  acquire(ms, MILLISECONDS): "ACQUIRED <node>", then releases
//                  and prints "RELEASED"; or "TIMEOUT". Exits 0 either way.
//   counter <path> <file> <n>
//                  n times: acquire; read a decimal integer from <file>
//                  (missing or empty: 0); write value + 1 followed by a
//                  newline; release. Then "DONE <n>". Any peer (Curator or
//                  distlock) that does the same under the same lock keeps the
//                  file's count exact.
//   bench <path> <threads> <seconds> <uncontended|contended>
//                  one InterProcessMutex per thread on the one client, on
//                  <path>-<i> (uncontended) or all on <path> (contended);
//                  each thread does acquire+release pairs until <seconds>
//                  (a decimal number) have passed. Then one line
//                  "RESULT pairs_per_s=<x> acquire_p50_us=<x> acquire_p99_us=<x> pairs=<n>"
//                  (acquire latency: from the call to acquire() to its return).
//   handoff <path> <threads> <seconds>
//                  one InterProcessMutex per thread on the one client, all on
//                  <path>; each thread loops: acquire, read the time the last
//                  holder stamped (System.nanoTime) right before its release,
//                  stamp its own, release. A handoff is the time from that
//                  stamp to the next holder's acquire() returning, counted
//                  when the next holder is another thread. Then one line
//                  "RESULT handoff_p50_us=<x> handoff_p99_us=<x> pairs=<n> pairs_per_s=<x> handoffs=<n>"
//                  (pairs: acquisitions; handoffs: those from another thread).
//
// bench and handoff first run their loop for CURATOR_PEER_WARMUP_MS (default
// 0: none) and count nothing of it (JIT warm-up); the <seconds> of the
// measured window start after it. With a warm-up, bench prints
// "WARMUP pairs=<n>" (the pairs it made) right before its RESULT line. A pair (an acquisition) counts when it
// started inside the window; the rates divide by the time from the window's
// start until every thread has stopped.
//
// Connection state changes after CONNECTED are printed as "STATE <name>"
// (SUSPENDED, RECONNECTED, LOST, ...). Errors print "ERROR <text>". Exit
// status: 0 ok, 1 a failure after connecting (an operation threw), 2 usage,
// 3 not connected within the connection timeout.
//
// Environment: CURATOR_PEER_SESSION_TIMEOUT_MS (default 10000),
// CURATOR_PEER_CONNECTION_TIMEOUT_MS (default 15000: how long to wait for
// CONNECTED) and CURATOR_PEER_WARMUP_MS (default 0; bench and handoff only). Logging (slf4j) never goes to stdout: put slf4j-simple on the
// class path to get it on stderr.
//
// Curator's InterProcessMutex names its nodes <path>/_c_<uuid>-lock-<seq>
// (protected ephemeral sequential); the lowest sequence number holds.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CuratorPeer {
  private static final int EXIT_OK = 0;
  private static final int EXIT_FAILURE = 1;
  private static final int EXIT_USAGE = 2;
  private static final int EXIT_NOT_CONNECTED = 3;

  private static final String USAGE =
      "usage: CuratorPeer <connectString> <mode> args...\n"
          + "  hold <path> | wait <path> | try <path> <ms> | counter <path> <file> <n>\n"
          + "  | bench <path> <threads> <seconds> <uncontended|contended>\n"
          + "  | handoff <path> <threads> <seconds>";

  // stdout carries the protocol only; every line is flushed at once.
  private static final PrintStream OUT =
      new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
          StandardCharsets.UTF_8);

  private CuratorPeer() {}

  // InterProcessMutex keeps the path of the node a thread holds; it only
  // exposes it to subclasses (getLockPath, protected).
  static final class PeerMutex extends InterProcessMutex {
    PeerMutex(CuratorFramework client, String path) {
      super(client, path);
    }

    // The full path of the calling thread's lock node, null if it holds none.
    String ownLockPath() {
      return getLockPath();
    }
  }

  private static final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  private static synchronized void say(String line) {
    OUT.println(line);
  }

  public static void main(String[] args) {
    int status;
    try {
      status = run(args);
    } catch (UsageException e) {
      say("ERROR usage: " + e.getMessage());
      System.err.println(e.getMessage() + "\n" + USAGE);
      status = EXIT_USAGE;
    } catch (Exception e) {
      say("ERROR " + oneLine(e));
      e.printStackTrace();
      status = EXIT_FAILURE;
    }
    OUT.flush();
    // Curator's and ZooKeeper's threads must not keep the JVM alive.
    Runtime.getRuntime().halt(status);
  }

  private static String oneLine(Throwable e) {
    return String.valueOf(e).replace('\n', ' ');
  }

  private static long number(String text, String what, long min) throws UsageException {
    try {
      final long value = Long.parseLong(text);
      if (value >= min) return value;
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new UsageException(what + " must be an integer >= " + min + ", not '" + text + "'");
  }

  private static long envMillis(String name, long fallback) throws UsageException {
    return envMillis(name, fallback, 1);
  }

  private static long envMillis(String name, long fallback, long min) throws UsageException {
    final String text = System.getenv(name);
    return text == null || text.isEmpty() ? fallback : number(text, name, min);
  }

  private static void expectArgs(String[] args, int count) throws UsageException {
    if (args.length != count) {
      throw new UsageException("mode " + args[1] + " takes " + (count - 2) + " argument(s), got "
          + (args.length - 2));
    }
  }

  private static int run(String[] args) throws Exception {
    if (args.length < 3) throw new UsageException("too few arguments");
    final String connect = args[0];
    final String mode = args[1];
    final String path = args[2];
    // Every argument is checked before connecting.
    switch (mode) {
      case "hold":
      case "wait":
        expectArgs(args, 3);
        break;
      case "try":
        expectArgs(args, 4);
        number(args[3], "ms", 0);
        break;
      case "counter":
        expectArgs(args, 5);
        number(args[4], "n", 0);
        break;
      case "bench":
        expectArgs(args, 6);
        number(args[3], "threads", 1);
        benchSeconds(args[4]);
        if (!args[5].equals("uncontended") && !args[5].equals("contended")) {
          throw new UsageException("bench takes uncontended or contended, not '" + args[5] + "'");
        }
        break;
      case "handoff":
        expectArgs(args, 5);
        number(args[3], "threads", 1);
        benchSeconds(args[4]);
        break;
      default:
        throw new UsageException("unknown mode '" + mode + "'");
    }
    final long warmupMillis = envMillis("CURATOR_PEER_WARMUP_MS", 0, 0);
    final long sessionTimeout = envMillis("CURATOR_PEER_SESSION_TIMEOUT_MS", 10_000);
    final long connectionTimeout = envMillis("CURATOR_PEER_CONNECTION_TIMEOUT_MS", 15_000);

    final CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString(connect)
            .sessionTimeoutMs((int) Math.min(sessionTimeout, Integer.MAX_VALUE))
            // How long an operation waits for a connection; Curator warns
            // when it exceeds the session timeout.
            .connectionTimeoutMs((int) Math.min(Math.min(connectionTimeout, sessionTimeout),
                Integer.MAX_VALUE))
            .retryPolicy(new ExponentialBackoffRetry(100, 5))
            .build();
    // Every change after the first connection ("CONNECTED" below says that).
    client
        .getConnectionStateListenable()
        .addListener((c, state) -> {
          if (state != ConnectionState.CONNECTED) say("STATE " + state.name());
        });
    client.start();
    if (!client.blockUntilConnected(
            (int) Math.min(connectionTimeout, Integer.MAX_VALUE), TimeUnit.MILLISECONDS)) {
      say("ERROR not connected to " + connect + " within " + connectionTimeout + " ms");
      return EXIT_NOT_CONNECTED;
    }
    say("CONNECTED");

    switch (mode) {
      case "hold":
        return hold(client, path, false);
      case "wait":
        return hold(client, path, true);
      case "try":
        return tryAcquire(client, path, Long.parseLong(args[3]));
      case "counter":
        return counter(client, path, Paths.get(args[3]), Long.parseLong(args[4]));
      case "handoff":
        return handoff(client, path, Integer.parseInt(args[3]), warmupMillis,
            benchSeconds(args[4]));
      default:
        return bench(client, path, Integer.parseInt(args[3]), warmupMillis, benchSeconds(args[4]),
            args[5].equals("contended"));
    }
  }

  private static double benchSeconds(String text) throws UsageException {
    try {
      final double value = Double.parseDouble(text);
      if (value > 0 && value < 1e6) return value;
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new UsageException("seconds must be a number > 0, not '" + text + "'");
  }

  private static int hold(CuratorFramework client, String path, boolean announce)
      throws Exception {
    final PeerMutex mutex = new PeerMutex(client, path);
    if (announce) say("WAITING");
    mutex.acquire();
    say("ACQUIRED " + mutex.ownLockPath());
    final BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    boolean held = true;
    for (String line; (line = in.readLine()) != null; ) {
      switch (line.trim()) {
        case "release":
          if (held) {
            mutex.release();
            held = false;
            say("RELEASED");
          } else {
            say("ERROR not held");
          }
          break;
        case "exit":
          // No release: closing the client ends the session, and ZooKeeper
          // deletes the ephemeral lock node with it.
          client.close();
          return EXIT_OK;
        case "":
          break;
        default:
          say("ERROR unknown command '" + line.trim() + "'");
      }
    }
    if (held) {
      mutex.release();
      say("RELEASED");
    }
    client.close();
    return EXIT_OK;
  }

  private static int tryAcquire(CuratorFramework client, String path, long ms) throws Exception {
    final PeerMutex mutex = new PeerMutex(client, path);
    if (mutex.acquire(ms, TimeUnit.MILLISECONDS)) {
      say("ACQUIRED " + mutex.ownLockPath());
      mutex.release();
      say("RELEASED");
    } else {
      say("TIMEOUT");
    }
    client.close();
    return EXIT_OK;
  }

  private static long readCount(Path file) throws Exception {
    final String text;
    try {
      text = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).trim();
    } catch (NoSuchFileException e) {
      return 0;
    }
    return text.isEmpty() ? 0 : Long.parseLong(text);
  }

  private static int counter(CuratorFramework client, String path, Path file, long n)
      throws Exception {
    final InterProcessMutex mutex = new InterProcessMutex(client, path);
    for (long i = 0; i < n; ++i) {
      mutex.acquire();
      try {
        final long value = readCount(file);
        Files.write(file, (value + 1 + "\n").getBytes(StandardCharsets.UTF_8));
      } finally {
        mutex.release();
      }
    }
    say("DONE " + n);
    client.close();
    return EXIT_OK;
  }

  private static int bench(CuratorFramework client, String path, int threads, long warmupMillis,
      double seconds, boolean contended) throws Exception {
    final List<long[]> latencies = new ArrayList<>();
    final int[] counts = new int[threads];
    final CountDownLatch ready = new CountDownLatch(threads);
    final CountDownLatch go = new CountDownLatch(1);
    final AtomicReference<Exception> failure = new AtomicReference<>();
    final AtomicLong warmupPairs = new AtomicLong();
    // The measured window's start and end, in System.nanoTime().
    final long[] window = new long[2];
    final List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; ++t) {
      final int index = t;
      final long[] mine = new long[1 << 16];
      latencies.add(mine);
      final InterProcessMutex mutex =
          new InterProcessMutex(client, contended ? path : path + "-" + index);
      final Thread worker = new Thread(() -> {
        long[] samples = mine;
        int count = 0;
        long warm = 0;
        try {
          ready.countDown();
          go.await();
          final long from = window[0];
          final long end = window[1];
          for (long start; (start = System.nanoTime()) < end && failure.get() == null; ) {
            mutex.acquire();
            final long acquired = System.nanoTime();
            mutex.release();
            if (start < from) {  // warm-up
              ++warm;
              continue;
            }
            if (count == samples.length) samples = Arrays.copyOf(samples, 2 * count);
            samples[count++] = (acquired - start) / 1000;
          }
        } catch (Exception e) {
          failure.compareAndSet(null, e);
        }
        warmupPairs.addAndGet(warm);
        synchronized (latencies) {
          latencies.set(index, samples);
          counts[index] = count;
        }
      }, "bench-" + index);
      workers.add(worker);
      worker.start();
    }
    ready.await();
    window[0] = System.nanoTime() + warmupMillis * 1_000_000L;
    window[1] = window[0] + (long) (seconds * 1e9);
    go.countDown();  // publishes window to the workers
    for (Thread worker : workers) worker.join();
    final double elapsed = (System.nanoTime() - window[0]) / 1e9;
    if (failure.get() != null) throw failure.get();

    final long[] all = merged(latencies, counts);
    if (warmupMillis > 0) say("WARMUP pairs=" + warmupPairs.get());
    say(String.format(Locale.ROOT,
        "RESULT pairs_per_s=%.1f acquire_p50_us=%d acquire_p99_us=%d pairs=%d",
        all.length / elapsed, percentile(all, 0.50), percentile(all, 0.99), all.length));
    client.close();
    return EXIT_OK;
  }

  // The last release's stamp (System.nanoTime() right before release()) and
  // the thread that made it (-1: none yet). Written by the holder only.
  private static volatile long releasedAt;
  private static volatile int releasedBy = -1;

  private static int handoff(CuratorFramework client, String path, int threads,
      long warmupMillis, double seconds) throws Exception {
    final List<long[]> handoffs = new ArrayList<>();
    final int[] counts = new int[threads];
    final int[] pairs = new int[threads];
    final CountDownLatch ready = new CountDownLatch(threads);
    final CountDownLatch go = new CountDownLatch(1);
    final AtomicReference<Exception> failure = new AtomicReference<>();
    final long[] window = new long[2];  // as in bench
    final List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; ++t) {
      final int index = t;
      final long[] mine = new long[1 << 12];
      handoffs.add(mine);
      final InterProcessMutex mutex = new InterProcessMutex(client, path);
      final Thread worker = new Thread(() -> {
        long[] samples = mine;
        int count = 0;
        int acquisitions = 0;
        try {
          ready.countDown();
          go.await();
          final long from = window[0];
          final long end = window[1];
          for (long start; (start = System.nanoTime()) < end && failure.get() == null; ) {
            mutex.acquire();
            final long acquired = System.nanoTime();
            final int by = releasedBy;
            final long at = releasedAt;
            if (start >= from) {
              ++acquisitions;
              if (by >= 0 && by != index) {
                if (count == samples.length) samples = Arrays.copyOf(samples, 2 * count);
                samples[count++] = (acquired - at) / 1000;
              }
            }
            releasedBy = index;
            releasedAt = System.nanoTime();
            mutex.release();
          }
        } catch (Exception e) {
          failure.compareAndSet(null, e);
        }
        synchronized (handoffs) {
          handoffs.set(index, samples);
          counts[index] = count;
          pairs[index] = acquisitions;
        }
      }, "handoff-" + index);
      workers.add(worker);
      worker.start();
    }
    ready.await();
    window[0] = System.nanoTime() + warmupMillis * 1_000_000L;
    window[1] = window[0] + (long) (seconds * 1e9);
    go.countDown();
    for (Thread worker : workers) worker.join();
    final double elapsed = (System.nanoTime() - window[0]) / 1e9;
    if (failure.get() != null) throw failure.get();

    final long[] all = merged(handoffs, counts);
    long total = 0;
    synchronized (handoffs) {
      for (int p : pairs) total += p;
    }
    say(String.format(Locale.ROOT,
        "RESULT handoff_p50_us=%d handoff_p99_us=%d pairs=%d pairs_per_s=%.1f handoffs=%d",
        percentile(all, 0.50), percentile(all, 0.99), total, total / elapsed, all.length));
    client.close();
    return EXIT_OK;
  }

  // The first counts[t] values of every thread's array, sorted.
  private static long[] merged(List<long[]> perThread, int[] counts) {
    synchronized (perThread) {
      int total = 0;
      for (int c : counts) total += c;
      final long[] all = new long[total];
      int at = 0;
      for (int t = 0; t < counts.length; ++t) {
        System.arraycopy(perThread.get(t), 0, all, at, counts[t]);
        at += counts[t];
      }
      Arrays.sort(all);
      return all;
    }
  }

  // The nearest-rank percentile of sorted values; 0 for none.
  private static long percentile(long[] sorted, double p) {
    if (sorted.length == 0) return 0;
    final int rank = (int) Math.ceil(p * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
  }
}
