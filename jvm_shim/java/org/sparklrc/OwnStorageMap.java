package org.sparklrc;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.memory.MemoryEntry;

/**
 * A LinkedHashMap type (MemoryStore's field type) whose subclass keeps its own storage: the
 * inherited storage stays empty, so every Map method HashMap implements on it directly is
 * overridden here through get, put, remove, containsKey and {@link #peek}. (Methods that
 * JDK 21's SequencedMap adds are not: the shim targets JDK 17 and Spark calls none of them.)
 */
abstract class OwnStorageMap extends LinkedHashMap<BlockId, MemoryEntry<?>> {
  private static final long serialVersionUID = 1L;

  OwnStorageMap() {
    super(0, 0.75f, true); // never used
  }

  /** The value of {@code key}, or null, without counting a use. */
  abstract MemoryEntry<?> peek(Object key);

  @Override
  public synchronized MemoryEntry<?> getOrDefault(Object key, MemoryEntry<?> dflt) {
    return containsKey(key) ? get(key) : dflt;
  }

  @Override
  public synchronized MemoryEntry<?> putIfAbsent(BlockId key, MemoryEntry<?> value) {
    return containsKey(key) ? get(key) : put(key, value);
  }

  @Override
  public synchronized void putAll(Map<? extends BlockId, ? extends MemoryEntry<?>> m) {
    for (Map.Entry<? extends BlockId, ? extends MemoryEntry<?>> e : m.entrySet()) {
      put(e.getKey(), e.getValue());
    }
  }

  @Override
  public synchronized boolean remove(Object key, Object value) {
    if (containsKey(key) && java.util.Objects.equals(peek(key), value)) {
      remove(key);
      return true;
    }
    return false;
  }

  @Override
  public synchronized boolean replace(BlockId key, MemoryEntry<?> oldValue,
      MemoryEntry<?> newValue) {
    if (containsKey(key) && java.util.Objects.equals(peek(key), oldValue)) {
      put(key, newValue);
      return true;
    }
    return false;
  }

  @Override
  public synchronized MemoryEntry<?> replace(BlockId key, MemoryEntry<?> value) {
    return containsKey(key) ? put(key, value) : null;
  }

  @Override
  public synchronized MemoryEntry<?> computeIfAbsent(BlockId key,
      Function<? super BlockId, ? extends MemoryEntry<?>> f) {
    MemoryEntry<?> v = get(key);
    if (v == null) {
      v = f.apply(key);
      if (v != null) {
        put(key, v);
      }
    }
    return v;
  }

  @Override
  public synchronized MemoryEntry<?> computeIfPresent(BlockId key,
      BiFunction<? super BlockId, ? super MemoryEntry<?>, ? extends MemoryEntry<?>> f) {
    MemoryEntry<?> old = get(key);
    if (old == null) {
      return null;
    }
    return store(key, f.apply(key, old));
  }

  @Override
  public synchronized MemoryEntry<?> compute(BlockId key,
      BiFunction<? super BlockId, ? super MemoryEntry<?>, ? extends MemoryEntry<?>> f) {
    return store(key, f.apply(key, get(key)));
  }

  @Override
  public synchronized MemoryEntry<?> merge(BlockId key, MemoryEntry<?> value,
      BiFunction<? super MemoryEntry<?>, ? super MemoryEntry<?>, ? extends MemoryEntry<?>> f) {
    MemoryEntry<?> old = get(key);
    return store(key, old == null ? value : f.apply(old, value));
  }

  private MemoryEntry<?> store(BlockId key, MemoryEntry<?> v) {
    if (v == null) {
      remove(key);
    } else {
      put(key, v);
    }
    return v;
  }
}
