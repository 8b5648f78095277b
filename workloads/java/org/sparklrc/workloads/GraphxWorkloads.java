package org.sparklrc.workloads;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.graphx.Edge;
import org.apache.spark.graphx.Graph;
import org.apache.spark.graphx.lib.ConnectedComponents;
import org.apache.spark.graphx.lib.PageRank;
import org.apache.spark.graphx.lib.SVDPlusPlus;
import org.apache.spark.graphx.util.GraphGenerators;
import org.apache.spark.storage.StorageLevel;
import scala.Tuple2;
import scala.Tuple4;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * GraphX library algorithms (PageRank, ConnectedComponents, SVDPlusPlus) on seeded power-law
 * graphs from {@code GraphGenerators.logNormalGraph}: the spark-lrc benchmark's "real library"
 * workloads. Each method builds its graph, runs the algorithm and returns a JSON object with a
 * {@code checksum} (the same across runs, partitionings and eviction policies: exact integers, or
 * floats rounded to {@link #DIGITS} significant digits, since GraphX's sums may differ in the last
 * bits when shuffle blocks arrive in another order) and a few result numbers.
 *
 * <p>From Python: {@code sc._jvm.org.sparklrc.workloads.GraphxWorkloads.pagerank(sc._jsc.sc(), ...)}
 * (workloads/graphx.py). From a shell: {@code spark-submit --class
 * org.sparklrc.workloads.GraphxWorkloads JAR graphx-pagerank --scale 1} prints the JSON.
 */
public final class GraphxWorkloads {
    /** Significant digits floats keep in checksums. */
    public static final int DIGITS = 6;

    // PageRank: ~12.7 out-edges per vertex (log-normal), destinations skewed to a power law.
    static final int PR_VERTICES_PER_SCALE = 80_000;
    static final double PR_MU = 2.0;
    static final double PR_SIGMA = 1.0;
    static final double PR_DST_SKEW = 2.0;
    // ConnectedComponents: a sparse graph (~1.2 out-edges per vertex): a giant component, many
    // small ones, several Pregel supersteps.
    static final int CC_VERTICES_PER_SCALE = 250_000;
    static final double CC_MU = -0.5;
    static final double CC_SIGMA = 1.2;
    static final double CC_DST_SKEW = 1.0;
    // SVD++: users with log-normal activity rate items of power-law popularity.
    static final int SVD_USERS_PER_SCALE = 30_000;
    static final int SVD_ITEMS_PER_USER_DIV = 8;   // items = users / 8
    static final double SVD_MU = 2.2;
    static final double SVD_SIGMA = 0.8;
    static final double SVD_ITEM_SKEW = 2.5;
    static final int SVD_RANK = 8;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ClassTag<Object> OBJ = ClassTag$.MODULE$.apply(Object.class);

    private GraphxWorkloads() {}

    // ------------------------------------------------------------------------------ helpers

    /** splitmix64 finaliser (the same as workloads/common.py's mix64). */
    static long mix64(long z) {
        z += 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** A float in [0, 1), a pure function of (seed, stream, key). */
    static double uniform(long seed, long stream, long key) {
        long h = mix64(key ^ mix64(seed * 1_000_003L + stream));
        return (h >>> 11) * (1.0 / (1L << 53));
    }

    /** `x` rounded to DIGITS significant digits (-0.0 becomes 0.0). */
    public static double round(double x) {
        if (Double.isNaN(x) || Double.isInfinite(x)) {
            return x;
        }
        return new BigDecimal(x).round(new MathContext(DIGITS, RoundingMode.HALF_EVEN)).doubleValue() + 0.0;
    }

    /** Hash of one (id, value) record; `value` is already rounded or exact. */
    static long recordHash(long id, double value) {
        return mix64(mix64(id) ^ Double.doubleToLongBits(value));
    }

    static String checksum(long count, long sum) {
        return String.format("%d:%016x", count, sum);
    }

    /** Order-independent checksum of (vertex id, rounded value) pairs, computed on the executors. */
    static String vertexChecksum(JavaRDD<Tuple2<Object, Object>> vertices, boolean round) {
        long[] cs = vertices.map(t -> {
            double v = ((Number) t._2()).doubleValue();
            return new long[] {1L, recordHash(((Number) t._1()).longValue(), round ? round(v) : v)};
        }).fold(new long[] {0L, 0L}, (a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
        return checksum(cs[0], cs[1]);
    }

    static String combine(String... parts) {
        long sum = 0;
        for (String p : parts) {
            long h = 0;
            for (char c : p.toCharArray()) {
                h = mix64(h ^ c);
            }
            sum += h;
        }
        return checksum(parts.length, sum);
    }

    static StorageLevel level(String name) {
        String key = (name == null || name.isEmpty()) ? "MEMORY_ONLY" : name.toUpperCase();
        return StorageLevel.fromString(key);
    }

    /** Destination `dst` in [0, n) mapped to [0, m) with a heavy head (power-law in-degrees). */
    static long skew(long dst, int n, int m, double alpha) {
        double u = (mix64(dst * 31 + 7) >>> 11) * (1.0 / (1L << 53)); // a fixed permutation-ish
        return Math.min((long) (m * Math.pow(u, alpha)), m - 1);
    }

    /**
     * The edges of {@code GraphGenerators.logNormalGraph(sc, n, partitions, mu, sigma, seed)} (log-normal
     * out-degrees, `partitions` edge partitions, deterministic for a seed), destinations mapped by
     * {@link #skew} into [0, m). The generator's own graph is never cached: its edges are only a source.
     * (logNormalGraph seeds vertex v's RNG with seed' ^ v, and the first draws of java.util.Random
     * for nearby seeds are correlated, so at small scales the mean degree varies much with the seed.)
     */
    static JavaRDD<Edge<Object>> generatedEdges(SparkContext sc, int n, int m, int partitions, double mu,
                                                double sigma, long seed, double dstSkew) {
        Graph<Object, Object> gen = GraphGenerators.logNormalGraph(sc, n, partitions, mu, sigma, seed);
        gen.edges().unpersist(false);
        gen.vertices().unpersist(false);
        final long salt = seed;
        return gen.edges().toJavaRDD().map(e -> {
            long dst = dstSkew == 1.0 && m == n ? e.dstId() : skew(e.dstId() ^ salt, n, m, dstSkew);
            return new Edge<Object>(e.srcId(), dst, e.attr());
        });
    }

    static int scaled(int perScale, double scale) {
        return Math.max(50, (int) Math.round(perScale * scale));
    }

    static int parts(SparkContext sc, int partitions) {
        return partitions > 0 ? partitions : Math.max(2, sc.defaultParallelism());
    }

    static List<long[]> edgeList(JavaRDD<Edge<Object>> edges) {
        List<long[]> out = new ArrayList<>();
        for (Edge<Object> e : edges.collect()) {
            out.add(new long[] {e.srcId(), e.dstId()});
        }
        return out;
    }

    static java.util.Set<Object> persistentIds(SparkContext sc) {
        return new java.util.HashSet<>(scala.jdk.javaapi.CollectionConverters.asJava(sc.getPersistentRDDs()).keySet());
    }

    /** Unpersists the RDDs cached since `before` (GraphX leaves some of its graphs cached). */
    static void unpersistSince(SparkContext sc, java.util.Set<Object> before) {
        for (Map.Entry<Object, org.apache.spark.rdd.RDD<?>> e
                : scala.jdk.javaapi.CollectionConverters.asJava(sc.getPersistentRDDs()).entrySet()) {
            if (!before.contains(e.getKey())) {
                e.getValue().unpersist(false);
            }
        }
    }

    static String json(Map<String, Object> out) {
        try {
            return JSON.writeValueAsString(out);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    // ------------------------------------------------------------------------------ PageRank

    public static String pagerank(SparkContext sc, double scale, long seed, int iterations, int partitions,
                                  String storageLevel) {
        return pagerank(sc, scale, seed, iterations, partitions, storageLevel, false);
    }

    /**
     * {@code PageRank.run} (static iterations, reset probability 0.15; GraphX normalises the ranks to
     * sum to the number of vertices). `details` adds the edge list and every rank (small scales only).
     */
    public static String pagerank(SparkContext sc, double scale, long seed, int iterations, int partitions,
                                  String storageLevel, boolean details) {
        java.util.Set<Object> before = persistentIds(sc);
        int n = scaled(PR_VERTICES_PER_SCALE, scale);
        int p = parts(sc, partitions);
        StorageLevel lvl = level(storageLevel);
        JavaRDD<Edge<Object>> edges = generatedEdges(sc, n, n, p, PR_MU, PR_SIGMA, seed, PR_DST_SKEW);
        Graph<Object, Object> graph = Graph.fromEdges(edges.rdd(), (Object) 0L, lvl, lvl, OBJ, OBJ);
        Graph<Object, Object> ranks = PageRank.run(graph, iterations, 0.15, OBJ, OBJ);

        JavaRDD<Tuple2<Object, Object>> vs = ranks.vertices().toJavaRDD();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("checksum", vertexChecksum(vs, true));
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("generated_vertices", n);
        result.put("vertices", ranks.vertices().count());
        result.put("edges", ranks.edges().count());
        result.put("iterations", iterations);
        result.put("partitions", p);
        result.put("rank_sum", round(vs.map(t -> ((Number) t._2()).doubleValue()).reduce(Double::sum)));
        List<Object> top = new ArrayList<>();
        for (Tuple2<Object, Object> t : vs.takeOrdered(5, new ByRankDesc())) {
            top.add(Arrays.asList(((Number) t._1()).longValue(), round(((Number) t._2()).doubleValue())));
        }
        result.put("top", top);
        out.put("result", result);
        if (details) {
            out.put("edge_list", edgeList(edges));
            Map<String, Double> all = new LinkedHashMap<>();
            for (Tuple2<Object, Object> t : vs.collect()) {
                all.put(String.valueOf(t._1()), ((Number) t._2()).doubleValue());
            }
            out.put("values", all);
        }
        unpersistSince(sc, before);
        return json(out);
    }

    /** Rank descending, then vertex id: a total order (serializable, for takeOrdered). */
    static final class ByRankDesc implements java.util.Comparator<Tuple2<Object, Object>>, java.io.Serializable {
        @Override
        public int compare(Tuple2<Object, Object> a, Tuple2<Object, Object> b) {
            int c = Double.compare(round(((Number) b._2()).doubleValue()), round(((Number) a._2()).doubleValue()));
            return c != 0 ? c : Long.compare(((Number) a._1()).longValue(), ((Number) b._1()).longValue());
        }
    }

    // ------------------------------------------------------------------------------ ConnectedComponents

    public static String connectedComponents(SparkContext sc, double scale, long seed, int maxIterations,
                                             int partitions, String storageLevel) {
        return connectedComponents(sc, scale, seed, maxIterations, partitions, storageLevel, false);
    }

    /**
     * {@code ConnectedComponents.run} (Pregel, edges followed both ways; a component's id is its
     * smallest vertex id). `maxIterations` <= 0: until convergence. Everything is exact.
     */
    public static String connectedComponents(SparkContext sc, double scale, long seed, int maxIterations,
                                             int partitions, String storageLevel, boolean details) {
        java.util.Set<Object> before = persistentIds(sc);
        int n = scaled(CC_VERTICES_PER_SCALE, scale);
        int p = parts(sc, partitions);
        StorageLevel lvl = level(storageLevel);
        JavaRDD<Edge<Object>> edges = generatedEdges(sc, n, n, p, CC_MU, CC_SIGMA, seed, CC_DST_SKEW);
        Graph<Object, Object> graph = Graph.fromEdges(edges.rdd(), (Object) 0L, lvl, lvl, OBJ, OBJ);
        Graph<Object, Object> cc = maxIterations > 0
            ? ConnectedComponents.run(graph, maxIterations, OBJ, OBJ)
            : ConnectedComponents.run(graph, OBJ, OBJ);

        JavaRDD<Tuple2<Object, Object>> vs = cc.vertices().toJavaRDD();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("checksum", vertexChecksum(vs, false));
        List<Tuple2<Long, Long>> sizes = vs
            .mapToPair(t -> new Tuple2<>(((Number) t._2()).longValue(), 1L))
            .reduceByKey(Long::sum, p)
            .map(t -> new Tuple2<>(t._1(), t._2()))
            .collect();
        long largest = 0;
        long largestId = -1;
        for (Tuple2<Long, Long> s : sizes) {
            if (s._2() > largest || (s._2() == largest && s._1() < largestId)) {
                largest = s._2();
                largestId = s._1();
            }
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("generated_vertices", n);
        result.put("vertices", cc.vertices().count());
        result.put("edges", cc.edges().count());
        result.put("max_iterations", maxIterations);
        result.put("partitions", p);
        result.put("components", sizes.size());
        result.put("largest", largest);
        result.put("largest_id", largestId);
        out.put("result", result);
        if (details) {
            out.put("edge_list", edgeList(edges));
            Map<String, Long> all = new LinkedHashMap<>();
            for (Tuple2<Object, Object> t : vs.collect()) {
                all.put(String.valueOf(t._1()), ((Number) t._2()).longValue());
            }
            out.put("values", all);
        }
        unpersistSince(sc, before);
        return json(out);
    }

    // ------------------------------------------------------------------------------ SVD++

    public static String svdpp(SparkContext sc, double scale, long seed, int iterations, int partitions,
                               String storageLevel) {
        return svdpp(sc, scale, seed, iterations, partitions, storageLevel, false);
    }

    /**
     * {@code SVDPlusPlus.run} on user -> item ratings (user u is vertex 2u, item i is 2i+1; ratings 1..5
     * from hidden user and item biases plus noise). The RMSE is over the training ratings (what
     * SVDPlusPlus leaves in each user's 4th attribute). SVDPlusPlus builds its graphs at MEMORY_ONLY
     * (it calls edges.cache() and Graph.fromEdges with the default levels), so only MEMORY_ONLY is
     * accepted. Its initial factors come from the JVM-global scala.util.Random without a seed
     * (Spark's TODO); they are drawn here from a generator seeded by `seed` (see {@link SeededScalaRandom}).
     */
    public static String svdpp(SparkContext sc, double scale, long seed, int iterations, int partitions,
                               String storageLevel, boolean details) {
        if (storageLevel != null && !storageLevel.isEmpty() && !level(storageLevel).equals(StorageLevel.MEMORY_ONLY())) {
            throw new IllegalArgumentException(
                "graphx-svdpp: SVDPlusPlus caches its graphs at MEMORY_ONLY; storage level " + storageLevel
                    + " is not supported");
        }
        java.util.Set<Object> before = persistentIds(sc);
        int users = scaled(SVD_USERS_PER_SCALE, scale);
        int items = Math.max(10, users / SVD_ITEMS_PER_USER_DIV);
        int p = parts(sc, partitions);
        final long s = seed;
        JavaRDD<Edge<Object>> ratings = generatedEdges(sc, users, items, p, SVD_MU, SVD_SIGMA, seed, SVD_ITEM_SKEW)
            .map(e -> {
                long u = e.srcId();
                long i = e.dstId();
                double bu = uniform(s, 41, u) * 2 - 1;
                double bi = uniform(s, 42, i) * 2 - 1;
                double noise = uniform(s, 43, u * 1_000_003L + i) - 0.5;
                double r = Math.max(1, Math.min(5, Math.rint(3 + 1.5 * (bu + bi) + noise)));
                return new Edge<Object>(2 * u, 2 * i + 1, r);
            });
        SVDPlusPlus.Conf conf = new SVDPlusPlus.Conf(SVD_RANK, iterations, 1.0, 5.0, 0.007, 0.007, 0.005, 0.015);
        String[] init = new String[1];
        Tuple2<Graph<Tuple4<double[], double[], Object, Object>, Object>, Object> res =
            SeededScalaRandom.with(seed, () -> SVDPlusPlus.run(ratings.rdd(), conf), init);
        Graph<Tuple4<double[], double[], Object, Object>, Object> g = res._1();
        double mean = ((Number) res._2()).doubleValue();

        long numEdges = g.edges().count();
        // users (even ids) carry the sum of their squared training errors in attribute 4
        double sse = g.vertices().toJavaRDD()
            .map(t -> ((Number) t._1()).longValue() % 2 == 0 ? ((Number) t._2()._4()).doubleValue() : 0.0)
            .reduce(Double::sum);
        double rmse = Math.sqrt(sse / numEdges);
        double[] rs = ratings.map(e -> new double[] {((Number) e.attr()).doubleValue(),
                ((Number) e.attr()).doubleValue() * ((Number) e.attr()).doubleValue()})
            .reduce((a, b) -> new double[] {a[0] + b[0], a[1] + b[1]});
        long ratingSum = Math.round(rs[0]);   // integers: exact
        double std = Math.sqrt(Math.max(0, rs[1] / numEdges - (rs[0] / numEdges) * (rs[0] / numEdges)));
        // every vertex's bias (attribute 3), rounded
        JavaRDD<Tuple2<Object, Object>> biases = g.vertices().toJavaRDD()
            .map(t -> new Tuple2<Object, Object>(t._1(), t._2()._3()));
        String biasSum = vertexChecksum(biases, true);
        long userCount = g.vertices().toJavaRDD().filter(t -> ((Number) t._1()).longValue() % 2 == 0).count();
        long vertexCount = g.vertices().count();

        Map<String, Object> out = new LinkedHashMap<>();
        out.put("checksum", combine(biasSum, String.valueOf(numEdges), String.valueOf(ratingSum),
            String.valueOf(round(mean)), String.valueOf(round(rmse))));
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("generated_users", users);
        result.put("users", userCount);
        result.put("items", vertexCount - userCount);
        result.put("ratings", numEdges);
        result.put("rating_sum", ratingSum);
        result.put("rating_std", round(std));
        result.put("mean", round(mean));
        result.put("rank", SVD_RANK);
        result.put("iterations", iterations);
        result.put("partitions", p);
        result.put("rmse", round(rmse));
        result.put("init", init[0]);
        out.put("result", result);
        if (details) {
            List<double[]> triples = new ArrayList<>();
            for (Edge<Object> e : ratings.collect()) {
                triples.add(new double[] {e.srcId(), e.dstId(), ((Number) e.attr()).doubleValue()});
            }
            out.put("edge_list", triples);
        }
        unpersistSince(sc, before);
        return json(out);
    }

    // ------------------------------------------------------------------------------ main

    static final String USAGE = "usage: GraphxWorkloads graphx-pagerank|graphx-cc|graphx-svdpp [--scale S] "
        + "[--seed N] [--iterations N] [--partitions N] [--storage-level L] [--master M]";

    /** `spark-submit --class org.sparklrc.workloads.GraphxWorkloads JAR graphx-pagerank --scale 1`. */
    public static void main(String[] args) {
        if (args.length < 1) {
            System.err.println(USAGE);
            System.exit(2);
        }
        String name = args[0];
        double scale = 1;
        long seed = 42;
        Integer iterations = null;
        int partitions = 0;
        String storageLevel = null;
        String master = null;
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                System.err.println(USAGE);
                System.exit(2);
            }
            String v = args[++i];
            switch (a) {
                case "--scale": scale = Double.parseDouble(v); break;
                case "--seed": seed = Long.parseLong(v); break;
                case "--iterations": iterations = Integer.parseInt(v); break;
                case "--partitions": partitions = Integer.parseInt(v); break;
                case "--storage-level": storageLevel = v; break;
                case "--master": master = v; break;
                default:
                    System.err.println("unknown option " + a + "\n" + USAGE);
                    System.exit(2);
            }
        }
        SparkConf conf = new SparkConf().setAppName("spark-lrc-" + name);
        if (master != null) {
            conf.setMaster(master);
        } else if (!conf.contains("spark.master")) {
            conf.setMaster("local[2]");
        }
        JavaSparkContext jsc = new JavaSparkContext(conf);
        jsc.setLogLevel("WARN");
        long t0 = System.nanoTime();
        String out;
        try {
            switch (name) {
                case "graphx-pagerank":
                    out = pagerank(jsc.sc(), scale, seed, iterations == null ? 10 : iterations, partitions, storageLevel);
                    break;
                case "graphx-cc":
                    out = connectedComponents(jsc.sc(), scale, seed, iterations == null ? 0 : iterations, partitions,
                        storageLevel);
                    break;
                case "graphx-svdpp":
                    out = svdpp(jsc.sc(), scale, seed, iterations == null ? 5 : iterations, partitions, storageLevel);
                    break;
                default:
                    System.err.println("unknown workload " + name + "\n" + USAGE);
                    jsc.stop();
                    System.exit(2);
                    return;
            }
        } finally {
            System.err.printf("%s scale=%s seed=%d seconds=%.2f%n", name, scale, seed, (System.nanoTime() - t0) / 1e9);
        }
        System.out.println(out);
        jsc.stop();
    }
}
