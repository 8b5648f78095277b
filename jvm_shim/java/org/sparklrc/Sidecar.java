package org.sparklrc;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkContext;
import py4j.GatewayServer;

/**
 * The brain of a driver that is not a PySpark process (a Scala/Java application, spark-sql,
 * spark-shell, the Thrift server): the same Python brain, run as a child process of the driver
 * JVM ({@code python -m spark_plugin.sidecar}). It talks to {@link LrcBridge} through a py4j
 * gateway (py4j ships in Spark's jars) that listens on loopback only and refuses a connection
 * without a random secret, handed to the child in its environment.
 *
 * <p>The child's stdin is its lifeline: closing it (at {@link #stop}, or by the OS when the
 * driver dies, even by SIGKILL) makes the brain flush its stats and exit, so no orphan survives
 * the application. Its output goes to the driver's stderr, never to the application's stdout.
 * Anything that fails here is one warning and Spark's LRU.
 */
final class Sidecar {
  static final String PORT_ENV = "SPARK_LRC_GATEWAY_PORT";
  static final String SECRET_ENV = "SPARK_LRC_GATEWAY_SECRET";
  static final String MODE = "spark.lrc.sidecar";
  static final String PYTHON = "spark.lrc.python";
  private static final long ATTACH_TIMEOUT_MS = 60_000;
  private static final long EXIT_TIMEOUT_MS = 60_000;

  private final GatewayServer gateway;
  private final Process process;
  private final String python;
  /** Set when the application ends: the brain's exit is then expected. */
  private volatile boolean stopping = false;

  private Sidecar(GatewayServer gateway, Process process, String python) {
    this.gateway = gateway;
    this.process = process;
    this.python = python;
  }

  /** Starts the sidecar if this driver wants one, and waits until its brain attached. */
  static Sidecar startIfWanted(SparkContext sc, Settings settings, TableStore tables) {
    String mode = String.valueOf(settings.get(MODE)).trim().toLowerCase();
    if (!settings.getBool("spark.lrc.brain") || mode.equals("false")
        || (!mode.equals("true") && drivenByPython())) {
      return null;
    }
    String python = pythonOf(settings);
    Sidecar s = null;
    try {
      s = start(python);
      s.awaitAttached(tables);
      LrcLog.info("spark-lrc: sidecar brain attached (" + python + ", pid " + s.process.pid()
          + ")");
      Sidecar started = s;
      s.process.onExit().thenRun(() -> {  // killed, or crashed: LRU at once, not after a timeout
        if (!started.stopping) {
          BrainWatchdog.fallBack(tables, "the sidecar brain exited with code "
              + started.process.exitValue() + " while the application runs");
        }
      });
      return s;
    } catch (Throwable t) {
      if (s != null) {
        s.kill();
      }
      LrcLog.warnOnce("sidecar", "spark-lrc: the sidecar brain did not start (" + python
          + " -m spark_plugin.sidecar; set spark.lrc.python to an interpreter that imports "
          + "spark_plugin); Spark's LRU stays in effect: " + t.getMessage(), null);
      return null;
    }
  }

  /** The SparkContext is being built by a py4j call: the driver program is PySpark's. */
  static boolean drivenByPython() {
    for (StackTraceElement e : Thread.currentThread().getStackTrace()) {
      if (e.getClassName().startsWith("py4j.")) {
        return true;
      }
    }
    return false;
  }

  private static String pythonOf(Settings settings) {
    for (String v : new String[] {settings.get(PYTHON), System.getenv("PYSPARK_DRIVER_PYTHON"),
        System.getenv("PYSPARK_PYTHON")}) {
      if (v != null && !v.trim().isEmpty()) {
        return v.trim();
      }
    }
    return "python3";
  }

  private static Sidecar start(String python) throws Exception {
    byte[] raw = new byte[32];
    new SecureRandom().nextBytes(raw);
    StringBuilder secret = new StringBuilder();
    for (byte b : raw) {
      secret.append(String.format("%02x", b));
    }
    GatewayServer gateway = new GatewayServer.GatewayServerBuilder(new LrcBridge())
        .javaPort(0).javaAddress(InetAddress.getLoopbackAddress())
        .authToken(secret.toString()).build();
    NoDelay.onEveryConnection(gateway); // the brain's drains come whole (see NoDelay)
    // The accept loop on a daemon thread: its connection threads inherit that, so the gateway
    // never keeps the JVM alive.
    Thread accept = new Thread(() -> gateway.start(false), "spark-lrc-sidecar-gateway");
    accept.setDaemon(true);
    accept.start();
    long deadline = System.currentTimeMillis() + 10_000;
    while (gateway.getListeningPort() <= 0) {
      if (System.currentTimeMillis() > deadline || !accept.isAlive()) {
        gateway.shutdown();
        throw new IllegalStateException("the py4j gateway did not start listening");
      }
      Thread.sleep(5);
    }
    ProcessBuilder pb = new ProcessBuilder(python, "-m", "spark_plugin.sidecar");
    pb.environment().put(PORT_ENV, Integer.toString(gateway.getListeningPort()));
    pb.environment().put(SECRET_ENV, secret.toString());
    pb.redirectErrorStream(true);
    Process process;
    try {
      process = pb.start();
    } catch (Exception e) {
      gateway.shutdown();
      throw e;
    }
    Thread pump = new Thread(() -> copyToStderr(process), "spark-lrc-sidecar-output");
    pump.setDaemon(true);
    pump.start();
    return new Sidecar(gateway, process, python);
  }

  private static void copyToStderr(Process process) {
    try (BufferedReader r = new BufferedReader(
        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        System.err.println(line);
      }
    } catch (Exception ignored) {
      // the child is gone
    }
  }

  private void awaitAttached(TableStore tables) throws Exception {
    long deadline = System.currentTimeMillis() + ATTACH_TIMEOUT_MS;
    while (!tables.brainAttached()) {
      if (!process.isAlive()) {
        throw new IllegalStateException("it exited with code " + process.exitValue()
            + " (its output is above)");
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("its brain did not attach within "
            + ATTACH_TIMEOUT_MS + " ms");
      }
      Thread.sleep(10);
    }
  }

  /**
   * At the application's end: let the listener bus deliver the last events (Spark stops plugins
   * before it), close the lifeline so the brain drains them and writes its files, wait for it.
   */
  void stop(SparkContext sc) {
    stopping = true;
    try {
      try {
        sc.listenerBus().waitUntilEmpty(10_000);
      } catch (Throwable t) {
        // a slow listener: the brain closes with what has arrived
      }
      process.getOutputStream().close();
      if (!process.waitFor(EXIT_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
        LrcLog.warn("spark-lrc: the sidecar brain did not exit within " + EXIT_TIMEOUT_MS
            + " ms of the application's end; killed");
      }
    } catch (Throwable t) {
      LrcLog.warnOnce("sidecar.stop", "spark-lrc: stopping the sidecar brain failed", t);
    } finally {
      kill();
    }
  }

  private void kill() {
    try {
      process.destroyForcibly();
    } catch (Throwable ignored) {
      // already gone
    }
    try {
      gateway.shutdown();
    } catch (Throwable ignored) {
      // already down
    }
  }

  @Override
  public String toString() {
    return "sidecar(" + python + ", pid " + process.pid() + ")";
  }
}
