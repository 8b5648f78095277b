package org.sparklrc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The driver's copy of the priority table: per-RDD priority arrays with the version that last
 * changed each, and the planned stages. Python publishes; executors ask for deltas.
 */
final class TableStore {
  private final Object mon = new Object();
  private long version = 0;
  private boolean brain = false;
  private final Map<Integer, double[]> arrays = new HashMap<>();
  /** rdd id -> version of its last change (removals stay as tombstones with an empty array). */
  private final Map<Integer, Long> changedAt = new HashMap<>();
  private final Map<Integer, Long> plannedAt = new HashMap<>();
  /** Stages whose plan a request already waited for in vain: later asks do not wait again (the
   * plugin endpoint is single-threaded, so waits would add up across executors). */
  private final java.util.Set<Integer> waitedOut = new java.util.HashSet<>();

  void attachBrain() {
    synchronized (mon) {
      brain = true;
      mon.notifyAll();
    }
  }

  void detachBrain() {
    synchronized (mon) {
      brain = false;
      mon.notifyAll();
    }
  }

  boolean brainAttached() {
    synchronized (mon) {
      return brain;
    }
  }

  long version() {
    synchronized (mon) {
      return version;
    }
  }

  void publish(long newVersion, String rddArrays, String plannedStages) {
    Map<Integer, double[]> parsed = TableCodec.parseArrays(rddArrays);
    List<Integer> planned = TableCodec.parseInts(plannedStages);
    synchronized (mon) {
      long v = newVersion;
      if (v <= version) {
        LrcLog.warnOnce("table.version", "spark-lrc: published table version " + newVersion
            + " is not above the current " + version + "; using " + (version + 1), null);
        v = version + 1;
      }
      for (Map.Entry<Integer, double[]> e : parsed.entrySet()) {
        arrays.put(e.getKey(), e.getValue());
        changedAt.put(e.getKey(), v);
      }
      for (Integer s : planned) {
        plannedAt.putIfAbsent(s, v);
      }
      version = v;
      mon.notifyAll();
    }
  }

  boolean planned(int stage) {
    synchronized (mon) {
      return plannedAt.containsKey(stage);
    }
  }

  /** Answers a request, waiting (bounded) for the stage's plan when a brain is attached. */
  String answer(TableRequest req) {
    synchronized (mon) {
      if (req.stageId >= 0 && req.waitMs > 0 && !waitedOut.contains(req.stageId)) {
        long deadline = System.nanoTime() + req.waitMs * 1_000_000L;
        while (brain && !plannedAt.containsKey(req.stageId)) {
          long left = (deadline - System.nanoTime()) / 1_000_000L;
          if (left <= 0) {
            waitedOut.add(req.stageId);
            break;
          }
          try {
            mon.wait(left);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            break;
          }
        }
      }
      boolean reset = req.haveVersion > version;
      long have = reset ? 0 : req.haveVersion;
      Map<Integer, double[]> delta = new LinkedHashMap<>();
      for (Map.Entry<Integer, Long> e : changedAt.entrySet()) {
        if (e.getValue() > have) {
          delta.put(e.getKey(), arrays.get(e.getKey()));
        }
      }
      List<Integer> planned = new ArrayList<>();
      for (Map.Entry<Integer, Long> e : plannedAt.entrySet()) {
        if (e.getValue() > have) {
          planned.add(e.getKey());
        }
      }
      return new TableCodec.Reply(version, reset, brain, planned, delta).encode();
    }
  }
}
