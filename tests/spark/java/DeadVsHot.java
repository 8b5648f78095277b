import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * The doctor's dead-vs-hot scenario as a plain Java application (no Python in the driver): `hot`
 * is read again by the last job, `dead` never; the last job first computes and caches `fresh`
 * (its shuffle-map stage, under memory pressure), then reads `hot`. Spark's LRU evicts hot's
 * blocks (cached first); LRC evicts dead's. The RDDs are named hot, dead and fresh (the event
 * log's block updates show which were evicted); prints the last job's result.
 *
 * <p>Usage: DeadVsHot PARTS KB FRESH_KB [HOLD_SECONDS] (HOLD_SECONDS: once hot and dead are
 * cached, say so on stderr and sleep, for tests that kill the driver or its brain)
 */
public final class DeadVsHot {
  static JavaRDD<byte[]> seeded(JavaSparkContext jsc, String name, int parts, int seed,
      int bytes) {
    List<Integer> idx = new ArrayList<>();
    for (int i = 0; i < parts; i++) {
      idx.add(i);
    }
    return jsc.parallelize(idx, parts).map(i -> {
      byte[] b = new byte[bytes];
      new Random(seed * 1000L + i).nextBytes(b);
      return b;
    }).setName(name).cache();
  }

  public static void main(String[] args) throws Exception {
    int parts = Integer.parseInt(args[0]);
    int kb = Integer.parseInt(args[1]);
    int freshKb = Integer.parseInt(args[2]);
    JavaSparkContext jsc = new JavaSparkContext(new SparkConf().setAppName("dead-vs-hot-java"));
    JavaRDD<byte[]> hot = seeded(jsc, "hot", parts, 1, kb * 1024);
    JavaRDD<byte[]> dead = seeded(jsc, "dead", parts, 2, kb * 1024);
    JavaRDD<byte[]> fresh = seeded(jsc, "fresh", parts / 2, 3, freshKb * 1024);
    hot.count();
    dead.count();
    if (args.length > 3) {  // tests kill the driver or its brain here
      System.err.println("DeadVsHot: holding " + args[3] + " s");
      Thread.sleep(Long.parseLong(args[3]) * 1000L);
    }
    JavaPairRDD<Integer, Integer> shuffled = fresh
        .mapToPair(b -> new Tuple2<>(b[0] % 3, b.length)).reduceByKey(Integer::sum, 2);
    List<Tuple2<Integer, Integer>> result = shuffled
        .union(hot.mapToPair(b -> new Tuple2<>((int) b[0], -b.length))).collect();
    TreeMap<String, Integer> sorted = new TreeMap<>();
    for (Tuple2<Integer, Integer> t : result) {
      sorted.merge(t._1() + ":" + t._2(), 1, Integer::sum);
    }
    System.out.println("result " + sorted);
    jsc.stop();
  }
}
