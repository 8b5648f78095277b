package org.sparklrc;

import com.fasterxml.jackson.core.io.JsonStringEncoder;

/**
 * One event line written straight into a StringBuilder, for the events without descriptions
 * (Events). The per-task ones are the shim's most frequent - a task end on the driver, a cache
 * report on every executor, once per task - and Jackson's tree model built a node per field and a
 * generator per line for each: most of the shim's executor samples in the JFR profile
 * (results/overhead/mllib/jfr). Jackson still escapes every string value; keys are the constant
 * ASCII field names of spark_plugin/wire.py and are written as they are.
 */
final class JsonLine {
  private static final JsonStringEncoder ESCAPE = JsonStringEncoder.getInstance();

  private final StringBuilder b = new StringBuilder(128);
  /** A value was written at the current level: the next key or element needs a comma. */
  private boolean comma;

  /** {@code {"e":"<type>"}}, open for more fields. */
  JsonLine(Events.Type type) {
    b.append("{\"e\":\"").append(type.wireName()).append('"');
    comma = true;
  }

  private void separate() {
    if (comma) {
      b.append(',');
    }
    comma = true;
  }

  private JsonLine key(String k) {
    separate();
    b.append('"').append(k).append("\":");
    return this;
  }

  private void string(String v) {
    if (v == null) {
      b.append("null");
    } else {
      b.append('"');
      ESCAPE.quoteAsString(v, b);
      b.append('"');
    }
  }

  JsonLine put(String k, long v) {
    key(k).b.append(v);
    return this;
  }

  JsonLine put(String k, boolean v) {
    key(k).b.append(v);
    return this;
  }

  /** A non-finite number is written as null (JSON has no NaN or infinity). */
  JsonLine put(String k, double v) {
    key(k);
    if (Double.isFinite(v)) {
      b.append(v);
    } else {
      b.append("null");
    }
    return this;
  }

  JsonLine put(String k, String v) {
    key(k).string(v);
    return this;
  }

  JsonLine strings(String k, Iterable<String> vs) {
    key(k).b.append('[');
    comma = false;
    for (String v : vs) {
      separate();
      string(v);
    }
    return end(']');
  }

  JsonLine ints(String k, int[] vs) {
    key(k).b.append('[');
    comma = false;
    for (int v : vs) {
      separate();
      b.append(v);
    }
    return end(']');
  }

  JsonLine longs(String k, Iterable<Long> vs) {
    key(k).b.append('[');
    comma = false;
    for (Long v : vs) {
      separate();
      b.append(v.longValue());
    }
    return end(']');
  }

  /** Opens an array of objects under {@code k}; each element starts with {@link #element()}. */
  JsonLine array(String k) {
    key(k).b.append('[');
    comma = false;
    return this;
  }

  /** Opens the next object of the open array. */
  JsonLine element() {
    separate();
    b.append('{');
    comma = false;
    return this;
  }

  /** Closes the open object ('}') or array (']'). */
  JsonLine end(char c) {
    b.append(c);
    comma = true;
    return this;
  }

  String text() {
    return b.append('}').toString();
  }
}
