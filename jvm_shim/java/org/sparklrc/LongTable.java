package org.sparklrc;

import java.util.ArrayList;
import java.util.List;

/**
 * Open-addressing hash map from primitive long keys to values (linear probing, Fibonacci hashing,
 * backward-shift deletion). The slot comes from the product's high bits: a double's bits (the
 * priority lists' keys) have their low bits all zero for small integers, which a mask of the low
 * bits put in one probe run. PriorityIndex looks up a block's RDD and priority list on every put: a boxed
 * Integer or Double key there would allocate per call. Not thread-safe; null values not allowed.
 */
final class LongTable<V> {
  private long[] keys = new long[16];
  private Object[] vals = new Object[16];
  private int size = 0;
  private int shift = 64 - 4; // 64 - log2(capacity)

  private int home(long k) {
    return (int) ((k * 0x9E3779B97F4A7C15L) >>> shift);
  }

  int size() {
    return size;
  }

  @SuppressWarnings("unchecked")
  V get(long k) {
    int m = keys.length - 1;
    for (int i = home(k); ; i = (i + 1) & m) {
      Object v = vals[i];
      if (v == null) {
        return null;
      }
      if (keys[i] == k) {
        return (V) v;
      }
    }
  }

  void put(long k, V v) {
    if (v == null) {
      throw new IllegalArgumentException("null value");
    }
    if ((size + 1) * 2 > keys.length) {
      grow();
    }
    int m = keys.length - 1;
    for (int i = home(k); ; i = (i + 1) & m) {
      if (vals[i] == null) {
        keys[i] = k;
        vals[i] = v;
        size++;
        return;
      }
      if (keys[i] == k) {
        vals[i] = v;
        return;
      }
    }
  }

  void remove(long k) {
    int m = keys.length - 1;
    int i = home(k);
    while (true) {
      if (vals[i] == null) {
        return;
      }
      if (keys[i] == k) {
        break;
      }
      i = (i + 1) & m;
    }
    vals[i] = null;
    size--;
    // Backward shift: move later entries of the probe run into the hole when their home slot
    // does not lie cyclically in (hole, their slot].
    for (int j = (i + 1) & m; vals[j] != null; j = (j + 1) & m) {
      int home = home(keys[j]);
      boolean stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (!stays) {
        keys[i] = keys[j];
        vals[i] = vals[j];
        vals[j] = null;
        i = j;
      }
    }
  }

  void clear() {
    java.util.Arrays.fill(vals, null);
    size = 0;
  }

  /** A copy of the values (for the rare whole-table passes). */
  @SuppressWarnings("unchecked")
  List<V> values() {
    List<V> out = new ArrayList<>(size);
    for (Object v : vals) {
      if (v != null) {
        out.add((V) v);
      }
    }
    return out;
  }

  private void grow() {
    long[] ok = keys;
    Object[] ov = vals;
    keys = new long[ok.length * 2];
    vals = new Object[ov.length * 2];
    shift--;
    size = 0;
    for (int i = 0; i < ok.length; i++) {
      if (ov[i] != null) {
        @SuppressWarnings("unchecked")
        V v = (V) ov[i];
        put(ok[i], v);
      }
    }
  }
}
