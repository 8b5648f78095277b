package org.sparklrc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * The driver's copy of the priority table: per-RDD priority arrays and the planned stages, plus a
 * version-ordered log of the changes executors may not have seen yet. Python publishes; each
 * executor keeps one request (its version) parked here through TableEndpoint and is answered with
 * the changes since that version, in O(changes), as soon as a publish moves the table past it
 * (push), or empty after the request's hold time. Each request acknowledges the asker's version;
 * the log keeps only versions above the lowest version a live executor acknowledged (the floor):
 * a request from below the floor gets a reset with the full table, so removed RDDs need no
 * tombstone once compacted. Public (with its constructors, publish, answer, watch and
 * logEntries) only so that tests can drive it through py4j.
 */
public final class TableStore {
  /** An executor that has not asked for this long no longer holds the floor back: an idle
   * executor's request is answered (and renewed) every few seconds, so only a removed (or stuck)
   * one is this quiet; should it ask again, it gets a reset. */
  static final long STALE_MS = 30_000;

  /** The changes of one version: RDDs whose latest change it is, stages it newly planned. */
  private static final class Change {
    final Set<Integer> rdds = new LinkedHashSet<>();
    final List<Integer> stages = new ArrayList<>();
  }

  /** An RDD changed above the floor (removed ones included): the log version holding it (its
   * latest change), the version of its last whole change (created, resized, removed) and of each
   * partition change since; a reply gives an asker at or above {@code wholeAt} only the
   * partitions changed after its version. */
  private static final class Logged {
    long at;
    long wholeAt;
    final Map<Integer, Long> parts = new HashMap<>();
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
  /** The last stages announced planned (as many as an executor remembers: bounded state). */
  private final Set<Integer> planned = java.util.Collections.newSetFromMap(
      new LinkedHashMap<Integer, Boolean>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, Boolean> eldest) {
          return size() > PriorityEntries.RECENT_PLANNED;
        }
      });
  /** version -> its changes, for versions above {@code floor}; each RDD in one version only. */
  private final TreeMap<Long, Change> log = new TreeMap<>();
  /** rdd id -> how it changed above the floor. */
  private final Map<Integer, Logged> logged = new HashMap<>();
  private int loggedStages = 0;
  /** Every change at or below this version is compacted out of the log. */
  private long floor = 0;
  private final Map<String, Ack> acks = new HashMap<>();
  /** Acknowledged version -> how many executors are at it: the floor candidate in O(log n). */
  private final TreeMap<Long, Integer> ackCounts = new TreeMap<>();
  /** Requests waiting for a version above theirs (at most one per executor). */
  private List<Parked> parked = new ArrayList<>();
  /** Driver wall clock (microseconds) when the current version was published. */
  private long publishedMicros = 0;
  /** GPU placement moves (wire.py's format), sent whole to executors below movesVersion. */
  private String moves = "";
  private long movesVersion = 0;

  /** A request held until the table moves past its version or its hold time ends. */
  private static final class Parked {
    final TableRequest req;
    final Consumer<String> reply;
    final long deadlineNs;

    Parked(TableRequest req, Consumer<String> reply, long deadlineNs) {
      this.req = req;
      this.reply = reply;
      this.deadlineNs = deadlineNs;
    }
  }

  public TableStore() {
    this(STALE_MS);
  }

  /** {@code staleMs}: see {@link #STALE_MS} (tests shorten it). */
  public TableStore(long staleMs) {
    this.staleNs = staleMs * 1_000_000L;
  }

  /** Executors learn at once that plans will come (they wait, bounded, for a new stage's). */
  void attachBrain() {
    synchronized (mon) {
      brain = true;
    }
    flushParked();
  }

  /** Executors learn at once that no plans will come (they stop waiting for them). */
  void detachBrain() {
    synchronized (mon) {
      brain = false;
    }
    flushParked();
  }

  /**
   * Spark's LRU from now on: a new version removes every RDD's priorities (all tie at 0, so
   * recency decides) and the brain is detached (executors stop waiting for plans). False when
   * no brain was attached (nothing to fall back from).
   */
  boolean fallBackToLru() {
    StringBuilder removeAll = new StringBuilder();
    long v;
    synchronized (mon) {
      if (!brain) {
        return false;
      }
      brain = false;
      for (Integer rdd : arrays.keySet()) {
        removeAll.append(removeAll.length() == 0 ? "" : ";").append(rdd).append('=');
      }
      v = version + 1;
    }
    publish(v, removeAll.toString(), "", ""); // and no placement moves
    return true;
  }

  /** RDD ids with priorities in the current table, ascending (inspection, tests). */
  java.util.List<Integer> tableRdds() {
    synchronized (mon) {
      java.util.List<Integer> out = new ArrayList<>(arrays.keySet());
      java.util.Collections.sort(out);
      return out;
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
    publish(newVersion, rddArrays, plannedStages, null);
  }

  /** As above; {@code newMoves} (null: unchanged) replaces the GPU placement moves. */
  public void publish(long newVersion, String rddArrays, String plannedStages, String newMoves) {
    List<Integer> stages = TableCodec.parseInts(plannedStages);
    synchronized (mon) {
      TableCodec.Items items = TableCodec.parseItems(rddArrays);
      long v = newVersion;
      if (v <= version) {
        LrcLog.warnOnce("table.version", "spark-lrc: published table version " + newVersion
            + " is not above the current " + version + "; using " + (version + 1), null);
        v = version + 1;
      }
      Change change = new Change();
      for (Map.Entry<Integer, double[]> e : items.whole.entrySet()) {
        log(change, v, e.getKey(), e.getValue(), null);
      }
      // partial items apply to the current arrays (under the monitor: one publisher)
      for (Map.Entry<Integer, Map<Integer, Double>> e : items.partial.entrySet()) {
        double[] base = arrays.get(e.getKey());
        double[] a = TableCodec.updated(base, e.getValue());
        log(change, v, e.getKey(), a, base != null && base.length == a.length
            ? e.getValue().keySet() : null);
      }
      for (Integer s : stages) {
        if (planned.add(s)) {
          change.stages.add(s);
        }
      }
      loggedStages += change.stages.size();
      if (!change.rdds.isEmpty() || !change.stages.isEmpty()) {
        log.put(v, change);
      }
      version = v;
      if (newMoves != null && !newMoves.equals(moves)) {
        moves = newMoves;
        movesVersion = v;
      }
      publishedMicros = nowMicros();
      expireStale(System.nanoTime());
      compact();
    }
    flushParked(); // the push: every parked executor gets the changes since its version
  }

  /** Sets the RDD's array (empty: removes it) at version {@code v} and logs the change: of the
   * partitions {@code parts}, or whole when null. */
  private void log(Change change, long v, Integer rdd, double[] a, Iterable<Integer> parts) {
    if (a.length == 0) {
      arrays.remove(rdd);
    } else {
      arrays.put(rdd, a);
    }
    Logged l = logged.get(rdd);
    if (l == null) {
      logged.put(rdd, l = new Logged());
    } else if (l.at != v) { // its earlier version no longer holds it
      Change old = log.get(l.at);
      old.rdds.remove(rdd);
      if (old.rdds.isEmpty() && old.stages.isEmpty()) {
        log.remove(l.at);
      }
    }
    l.at = v;
    if (parts == null) {
      l.wholeAt = v;
      l.parts.clear();
    } else {
      l.parts.values().removeIf(at -> at <= floor); // what every live executor has seen
      for (Integer p : parts) {
        l.parts.put(p, v);
      }
    }
    change.rdds.add(rdd);
  }

  /**
   * Answers {@code reply} with the changes since the request's version: at once if the table is
   * past that version (or the request has no hold time), else when a publish moves it past, or
   * with no change after {@code req.holdMs} (the executor then asks again).
   */
  public void watch(TableRequest req, Consumer<String> reply) {
    synchronized (mon) {
      if (req.haveVersion == version && req.holdMs > 0) {
        acknowledge(req.executor, req.haveVersion);
        for (int i = 0; i < parked.size(); i++) { // a newer request from the same executor wins
          if (parked.get(i).req.executor.equals(req.executor)) {
            parked.remove(i);
            break;
          }
        }
        parked.add(new Parked(req, reply, System.nanoTime() + req.holdMs * 1_000_000L));
        return;
      }
    }
    reply.accept(answer(req));
  }

  /** Answers the parked requests whose hold time is over (no change: their asker asks again). */
  public void expireParked() {
    List<Parked> due = new ArrayList<>();
    synchronized (mon) {
      long now = System.nanoTime();
      for (Iterator<Parked> it = parked.iterator(); it.hasNext(); ) {
        Parked p = it.next();
        if (now - p.deadlineNs >= 0) {
          due.add(p);
          it.remove();
        }
      }
    }
    replyAll(due);
  }

  /** Answers every parked request now. */
  void flushParked() {
    List<Parked> due;
    synchronized (mon) {
      due = parked;
      parked = new ArrayList<>();
    }
    replyAll(due);
  }

  /** Executors at the same version get the same (once encoded) reply. */
  private void replyAll(List<Parked> due) {
    if (due.isEmpty()) {
      return;
    }
    synchronized (mon) {
      due.forEach(p -> acknowledge(p.req.executor, p.req.haveVersion));
    }
    Map<Long, String> byVersion = new HashMap<>();
    for (Parked p : due) {
      try {
        p.reply.accept(byVersion.computeIfAbsent(p.req.haveVersion, this::since));
      } catch (Throwable t) {
        LrcLog.warnOnce("table.reply", "spark-lrc: could not answer executor "
            + p.req.executor + " (it asks again)", t);
      }
    }
  }

  /** The changes since the request's version (or a reset with the whole table), now. */
  public String answer(TableRequest req) {
    synchronized (mon) {
      acknowledge(req.executor, req.haveVersion);
    }
    return since(req.haveVersion);
  }

  /** The reply to an executor at version {@code have}. */
  private String since(long have) {
    TableCodec.Reply reply;
    synchronized (mon) {
      boolean reset = have > version || have < floor;
      Map<Integer, double[]> delta = new LinkedHashMap<>();
      Map<Integer, Map<Integer, Double>> partial = new LinkedHashMap<>();
      List<Integer> stages = new ArrayList<>();
      if (reset) {
        delta.putAll(arrays);
        stages.addAll(planned);
      } else {
        for (Change c : log.tailMap(have, false).values()) {
          for (Integer rdd : c.rdds) {
            double[] a = arrays.get(rdd);
            Logged l = logged.get(rdd);
            if (a == null || l.wholeAt > have) {
              delta.put(rdd, a == null ? new double[0] : a);
              continue;
            }
            Map<Integer, Double> parts = new java.util.TreeMap<>();
            l.parts.forEach((p, at) -> {
              if (at > have) {
                parts.put(p, a[p]);
              }
            });
            partial.put(rdd, parts);
          }
          stages.addAll(c.stages);
        }
      }
      String m = reset || movesVersion > have ? moves : null;
      reply = new TableCodec.Reply(version, reset, brain, stages, delta, partial,
          publishedMicros, m);
    }
    return reply.encode(); // arrays are never mutated once published: encode outside the monitor
  }

  /** Wall clock in microseconds (the executors' in-force lag compares it with theirs). */
  static long nowMicros() {
    java.time.Instant t = java.time.Instant.now();
    return t.getEpochSecond() * 1_000_000L + t.getNano() / 1_000;
  }

  /** Entries (RDDs, removed ones included, and stages) the version log holds: for tests. */
  public int logEntries() {
    synchronized (mon) {
      return logged.size() + loggedStages;
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
        logged.remove(rdd);
      }
      loggedStages -= c.stages.size();
    }
    done.clear();
    floor = to;
  }
}
