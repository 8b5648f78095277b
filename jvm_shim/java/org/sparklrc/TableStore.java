package org.sparklrc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The driver's copy of the priority table: per-RDD priority arrays and the planned stages, plus a
 * version-ordered log of the changes executors may not have seen yet. Python publishes; executors
 * ask for the changes since their version and are answered from the log in O(changes since that
 * version). Each executor's ask acknowledges its version; the log keeps only versions above the
 * lowest version a live executor acknowledged (the floor): an ask from below the floor gets a
 * reset with the full table, so removed RDDs need no tombstone once compacted. Public (with its
 * constructors, publish, answer and logEntries) only so that tests can drive it through py4j.
 */
public final class TableStore {
  /** An executor that has not asked for this long no longer holds the floor back: idle executors
   * ask every 2 s, so only a removed (or stuck) one is this quiet; should it ask again, it gets a
   * reset. */
  static final long STALE_MS = 30_000;

  /** The changes of one version: RDDs whose latest change it is, stages it newly planned. */
  private static final class Change {
    final Set<Integer> rdds = new LinkedHashSet<>();
    final List<Integer> stages = new ArrayList<>();
  }

  /** An executor's last ask. */
  private static final class Ack {
    long version;
    long atNs;
  }

  private final Object mon = new Object();
  private final long staleNs;
  private long version = 0;
  private boolean brain = false;
  /** The table: live RDDs only (a removal deletes the RDD; the log keeps it until compacted). */
  private final Map<Integer, double[]> arrays = new HashMap<>();
  private final Set<Integer> planned = new LinkedHashSet<>();
  /** version -> its changes, for versions above {@code floor}; each RDD in one version only. */
  private final TreeMap<Long, Change> log = new TreeMap<>();
  /** rdd id -> the log version holding it (RDDs changed above the floor, removed ones included). */
  private final Map<Integer, Long> loggedAt = new HashMap<>();
  private int loggedStages = 0;
  /** Every change at or below this version is compacted out of the log. */
  private long floor = 0;
  private final Map<String, Ack> acks = new HashMap<>();
  /** Acknowledged version -> how many executors are at it: the floor candidate in O(log n). */
  private final TreeMap<Long, Integer> ackCounts = new TreeMap<>();
  /** Stages whose plan a request already waited for in vain: later asks do not wait again (the
   * plugin endpoint is single-threaded, so waits would add up across executors). */
  private final Set<Integer> waitedOut = new HashSet<>();

  public TableStore() {
    this(STALE_MS);
  }

  /** {@code staleMs}: see {@link #STALE_MS} (tests shorten it). */
  public TableStore(long staleMs) {
    this.staleNs = staleMs * 1_000_000L;
  }

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

  public void publish(long newVersion, String rddArrays, String plannedStages) {
    Map<Integer, double[]> parsed = TableCodec.parseArrays(rddArrays);
    List<Integer> stages = TableCodec.parseInts(plannedStages);
    synchronized (mon) {
      long v = newVersion;
      if (v <= version) {
        LrcLog.warnOnce("table.version", "spark-lrc: published table version " + newVersion
            + " is not above the current " + version + "; using " + (version + 1), null);
        v = version + 1;
      }
      Change change = new Change();
      for (Map.Entry<Integer, double[]> e : parsed.entrySet()) {
        Integer rdd = e.getKey();
        if (e.getValue().length == 0) {
          arrays.remove(rdd);
        } else {
          arrays.put(rdd, e.getValue());
        }
        Long before = loggedAt.put(rdd, v);
        if (before != null) {
          Change old = log.get(before);
          old.rdds.remove(rdd);
          if (old.rdds.isEmpty() && old.stages.isEmpty()) {
            log.remove(before);
          }
        }
        change.rdds.add(rdd);
      }
      for (Integer s : stages) {
        if (planned.add(s)) {
          change.stages.add(s);
          waitedOut.remove(s); // a planned stage is never waited for again
        }
      }
      loggedStages += change.stages.size();
      if (!change.rdds.isEmpty() || !change.stages.isEmpty()) {
        log.put(v, change);
      }
      version = v;
      expireStale(System.nanoTime());
      compact();
      mon.notifyAll();
    }
  }

  /** Answers a request, waiting (bounded) for the stage's plan when a brain is attached. */
  public String answer(TableRequest req) {
    TableCodec.Reply reply;
    synchronized (mon) {
      if (req.stageId >= 0 && req.waitMs > 0 && !waitedOut.contains(req.stageId)) {
        long deadline = System.nanoTime() + req.waitMs * 1_000_000L;
        while (brain && !planned.contains(req.stageId)) {
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
      acknowledge(req.executor, req.haveVersion);
      boolean reset = req.haveVersion > version || req.haveVersion < floor;
      Map<Integer, double[]> delta = new LinkedHashMap<>();
      List<Integer> stages = new ArrayList<>();
      if (reset) {
        delta.putAll(arrays);
        stages.addAll(planned);
      } else {
        for (Change c : log.tailMap(req.haveVersion, false).values()) {
          for (Integer rdd : c.rdds) {
            double[] a = arrays.get(rdd);
            delta.put(rdd, a == null ? new double[0] : a);
          }
          stages.addAll(c.stages);
        }
      }
      reply = new TableCodec.Reply(version, reset, brain, stages, delta);
    }
    return reply.encode(); // arrays are never mutated once published: encode outside the monitor
  }

  /** Entries (RDDs, removed ones included, and stages) the version log holds: for tests. */
  public int logEntries() {
    synchronized (mon) {
      return loggedAt.size() + loggedStages;
    }
  }

  private void acknowledge(String executor, long have) {
    Ack a = acks.get(executor);
    if (a == null) {
      a = new Ack();
      acks.put(executor, a);
    } else {
      uncount(a.version);
    }
    a.version = have;
    a.atNs = System.nanoTime();
    ackCounts.merge(have, 1, Integer::sum);
    compact();
  }

  private void uncount(long v) {
    ackCounts.compute(v, (k, n) -> n == 1 ? null : n - 1);
  }

  private void expireStale(long nowNs) {
    for (Iterator<Ack> it = acks.values().iterator(); it.hasNext(); ) {
      Ack a = it.next();
      if (nowNs - a.atNs > staleNs) {
        uncount(a.version);
        it.remove();
      }
    }
  }

  /** Drops the log up to the lowest version a live executor acknowledged (all of it if none). */
  private void compact() {
    long to = ackCounts.isEmpty() ? version : Math.min(ackCounts.firstKey(), version);
    if (to <= floor) {
      return;
    }
    Map<Long, Change> done = log.headMap(to, true);
    for (Change c : done.values()) {
      for (Integer rdd : c.rdds) {
        loggedAt.remove(rdd);
      }
      loggedStages -= c.stages.size();
    }
    done.clear();
    floor = to;
  }
}
