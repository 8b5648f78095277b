package org.sparklrc;

import java.util.AbstractCollection;
import java.util.AbstractSet;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.memory.MemoryEntry;

/**
 * A LinkedHashMap type (MemoryStore's field type) whose subclass keeps its own storage: the
 * inherited storage stays empty, so every Map method HashMap implements on it directly is
 * overridden here through get, put, remove, containsKey and {@link #peek}, and the read-only
 * key and value views walk its slots. (Methods that
 * JDK 21's SequencedMap adds are not: the shim targets JDK 17 and Spark calls none of them.)
 */
abstract class OwnStorageMap extends LinkedHashMap<BlockId, MemoryEntry<?>> {
  private static final long serialVersionUID = 1L;

  OwnStorageMap() {
    super(0, 0.75f, true); // never used
  }

  /** The value of {@code key}, or null, without counting a use. */
  abstract MemoryEntry<?> peek(Object key);

  /** Slots of the subclass's storage: 0 .. top() - 1, each live or not. */
  abstract int top();

  abstract boolean live(int e);

  abstract BlockId keyAt(int e);

  abstract MemoryEntry<?> valueAt(int e);

  /** The keys (any order; read-only). */
  @Override
  public Set<BlockId> keySet() {
    return new AbstractSet<BlockId>() {
      @Override
      public int size() {
        return OwnStorageMap.this.size();
      }

      @Override
      public boolean contains(Object o) {
        return containsKey(o);
      }

      @Override
      public Iterator<BlockId> iterator() {
        return new Slots<BlockId>() {
          @Override
          BlockId at(int e) {
            return keyAt(e);
          }
        };
      }
    };
  }

  /** The stored values (MemoryStore.clear() disposes them; any order; read-only). */
  @Override
  public Collection<MemoryEntry<?>> values() {
    return new AbstractCollection<MemoryEntry<?>>() {
      @Override
      public int size() {
        return OwnStorageMap.this.size();
      }

      @Override
      public Iterator<MemoryEntry<?>> iterator() {
        return new Slots<MemoryEntry<?>>() {
          @Override
          MemoryEntry<?> at(int e) {
            return valueAt(e);
          }
        };
      }
    };
  }

  /** Live entries in table order (callers hold the monitor while iterating, as Spark does). */
  private abstract class Slots<T> implements Iterator<T> {
    private int e = advance(0);

    abstract T at(int e);

    private int advance(int from) {
      synchronized (OwnStorageMap.this) {
        int i = from;
        while (i < top() && !live(i)) {
          i++;
        }
        return i;
      }
    }

    @Override
    public boolean hasNext() {
      synchronized (OwnStorageMap.this) {
        return e < top();
      }
    }

    @Override
    public T next() {
      synchronized (OwnStorageMap.this) {
        if (e >= top()) {
          throw new NoSuchElementException();
        }
        T r = at(e);
        e = advance(e + 1);
        return r;
      }
    }
  }


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
