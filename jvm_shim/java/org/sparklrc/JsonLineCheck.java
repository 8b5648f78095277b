package org.sparklrc;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.Random;

/**
 * Randomized check that JsonLine writes exactly what Jackson's tree model writes for the same
 * fields: random strings (quotes, backslashes, control characters, non-ASCII, surrogate pairs,
 * null), doubles from random bits (NaN and infinities as null), longs and booleans, string
 * and long arrays and arrays of objects. Run by tests/spark/test_shim_local.py through py4j;
 * {@link #run} throws AssertionError on the first difference.
 */
public final class JsonLineCheck {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private JsonLineCheck() {}

  /** Runs seeds 0..seeds-1 (200 lines each); returns "ok". */
  public static String run(int seeds) {
    for (int seed = 0; seed < seeds; seed++) {
      Random r = new Random(seed);
      for (int i = 0; i < 200; i++) {
        String s = string(r);
        String t = string(r);
        double d = Double.longBitsToDouble(r.nextLong());
        double d2 = r.nextInt(4) == 0 ? Double.NaN : r.nextGaussian() * Math.pow(10, r.nextInt(40) - 20);
        long n = r.nextLong();
        boolean b = r.nextBoolean();
        String line = new JsonLine(Events.Type.TASK_CACHE).put("s", s).put("n", n).put("b", b)
            .put("d", d).strings("xs", Arrays.asList("x", t == null ? "" : t))
            .longs("ls", Arrays.asList(n, -1L)).ints("is", new int[] {(int) n, -1}).array("os")
            .element().put("t", t).put("d2", d2).end('}').element().end('}').end(']').text();
        ObjectNode o = JsonNodeFactory.instance.objectNode().put("e", "task_cache").put("s", s)
            .put("n", n).put("b", b);
        number(o, "d", d);
        o.putArray("xs").add("x").add(t == null ? "" : t);
        o.putArray("ls").add(n).add(-1L);
        o.putArray("is").add((int) n).add(-1);
        ObjectNode first = o.putArray("os").addObject().put("t", t);
        number(first, "d2", d2);
        o.withArray("os").addObject();
        String tree = text(o);
        if (!line.equals(tree)) {
          throw new AssertionError("seed " + seed + ": JsonLine wrote\n" + line + "\nJackson\n" + tree);
        }
      }
    }
    return "ok";
  }

  private static void number(ObjectNode o, String k, double v) {
    if (Double.isFinite(v)) {
      o.put(k, v);
    } else {
      o.putNull(k);
    }
  }

  private static String text(ObjectNode o) {
    try {
      return MAPPER.writeValueAsString(o);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static String string(Random r) {
    if (r.nextInt(10) == 0) {
      return null;
    }
    StringBuilder b = new StringBuilder();
    int len = r.nextInt(12);
    for (int i = 0; i < len; i++) {
      switch (r.nextInt(5)) {
        case 0: b.append((char) r.nextInt(0x20)); break;          // control characters
        case 1: b.append("\"\\/'<>&".charAt(r.nextInt(7))); break;
        case 2: b.appendCodePoint(0x80 + r.nextInt(0x2F80)); break; // non-ASCII
        case 3: b.appendCodePoint(0x1F600 + r.nextInt(80)); break; // a surrogate pair
        default: b.append((char) ('a' + r.nextInt(26)));
      }
    }
    return b.toString();
  }
}
