package org.sparklrc.bench;

import java.util.Arrays;
import java.util.Random;
import org.apache.spark.storage.RDDBlockId;
import org.sparklrc.PriorityEntries;
import org.sparklrc.TableCodec;
import org.sparklrc.TableRequest;
import org.sparklrc.TableStore;

/**
 * What one table version costs an executor when a policy changes a few partitions of a big cached
 * RDD (crd publishes such a version after every task end under memory pressure): the reply's
 * characters and its decode + apply, as the driver's TableStore answers now (just the changed
 * partitions) and as it answered before (the changed RDD's whole array). One RDD of N partitions,
 * every block cached on the executor, 4 partitions changed per version. Usage:
 * java -cp shim.jar:pyspark/jars/* org.sparklrc.bench.ReplyBench [partitions...]
 */
public final class ReplyBench {
  private static final int CHANGED = 4;
  private static final int RDD = 7;

  public static void main(String[] args) {
    int[] sizes = args.length == 0 ? new int[] {100, 1000, 10000} : new int[args.length];
    for (int i = 0; i < args.length; i++) {
      sizes[i] = Integer.parseInt(args[i]);
    }
    System.out.println("| partitions of the changed RDD | reply chars, changes / whole array "
        + "| decode + apply (ms, median), changes | same, whole array |");
    System.out.println("|---|---|---|---|");
    run(1000, 300, false); // JIT warm-up
    for (int n : sizes) {
      run(n, 300, true);
    }
  }

  private static PriorityEntries cached(int n) {
    PriorityEntries m = new PriorityEntries();
    for (int p = 0; p < n; p++) {
      m.put(new RDDBlockId(RDD, p), new EvictionBench.Entry(1 << 20));
    }
    return m;
  }

  private static void run(int n, int versions, boolean print) {
    Random rnd = new Random(42);
    TableStore store = new TableStore();
    StringBuilder first = new StringBuilder().append(RDD).append('=');
    for (int p = 0; p < n; p++) {
      first.append(p == 0 ? "" : ",").append(rnd.nextInt(50));
    }
    store.publish(1, first.toString(), "");
    PriorityEntries changes = cached(n);
    PriorityEntries whole = cached(n);
    String start = store.answer(new TableRequest("changes", 0, 0));
    TableCodec.Reply.decode(start).applyTo(changes);
    TableCodec.Reply.decode(start).applyTo(whole);
    long[] tChanges = new long[versions];
    long[] tWhole = new long[versions];
    long charsChanges = 0;
    long charsWhole = 0;
    for (int v = 2; v < versions + 2; v++) {
      StringBuilder b = new StringBuilder().append(RDD).append('@');
      for (int i = 0; i < CHANGED; i++) {
        b.append(i == 0 ? "" : ",").append(rnd.nextInt(n)).append(':').append(rnd.nextInt(50));
      }
      store.publish(v, b.toString(), "");
      // an executor one version behind (as under a publish per task end), and one at version
      // 0 which the log keeps: its delta is the RDD's whole array, the reply before this change
      String c = store.answer(new TableRequest("changes", v - 1, 0));
      String w = store.answer(new TableRequest("whole", 0, 0));
      long t0 = System.nanoTime();
      TableCodec.Reply.decode(c).applyTo(changes);
      long t1 = System.nanoTime();
      TableCodec.Reply.decode(w).applyTo(whole);
      long t2 = System.nanoTime();
      tChanges[v - 2] = t1 - t0;
      tWhole[v - 2] = t2 - t1;
      charsChanges += c.length();
      charsWhole += w.length();
    }
    for (int p = 0; p < n; p++) {
      if (changes.tablePriority(RDD, p) != whole.tablePriority(RDD, p)) {
        throw new IllegalStateException("the two executors' tables differ at partition " + p);
      }
    }
    if (print) {
      Arrays.sort(tChanges);
      Arrays.sort(tWhole);
      System.out.printf("| %d | %d / %d | %.4f | %.4f |%n", n, charsChanges / versions,
          charsWhole / versions, tChanges[versions / 2] / 1e6, tWhole[versions / 2] / 1e6);
    }
  }
}
