package org.sparklrc.workloads;

import java.lang.reflect.Field;
import java.util.Random;

/** SVDPlusPlus draws its initial factors from the JVM-global scala.util.Random, unseeded: this
 * seeds the draws of one thread, so that the GraphX SVD++ workload is reproducible. */
final class SeededScalaRandom {
    private SeededScalaRandom() {}

    /**
     * Runs `body` with the draws that the calling thread makes from the JVM-global scala.util.Random
     * coming from a generator seeded by `seed`; other threads (the task scheduler shuffles its offers
     * with the same object) keep drawing from the original. SVDPlusPlus draws its initial factor
     * vectors there (once, on the driver), so this makes it reproducible. Sets how[0] to "seeded",
     * or "unseeded" when the field cannot be replaced (another Scala build): then the result may vary.
     */
    static <T> T with(long seed, java.util.function.Supplier<T> body, String[] how) {
        Object module = scala.util.Random$.MODULE$;
        Field field;
        Random original;
        try {
            field = scala.util.Random.class.getDeclaredField("self");
            field.setAccessible(true);
            original = (Random) field.get(module);
            field.set(module, new ThreadSeeded(Thread.currentThread(), seed, original));
        } catch (ReflectiveOperationException | RuntimeException e) {
            how[0] = "unseeded";
            return body.get();
        }
        how[0] = "seeded";
        try {
            return body.get();
        } finally {
            try {
                field.set(module, original);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** java.util.Random seeded for one thread; the other threads draw from the original generator. */
    static final class ThreadSeeded extends Random {
        private final Thread owner;
        private final Random others;
        private long state;

        ThreadSeeded(Thread owner, long seed, Random others) {
            super(0L);
            this.owner = owner;
            this.others = others;
            this.state = (seed ^ 0x5DEECE66DL) & ((1L << 48) - 1);
        }

        @Override
        protected int next(int bits) {
            if (Thread.currentThread() != owner) {
                // what the original's next(bits) gives: the top `bits` of a 32-bit draw
                return others.nextInt() >>> (32 - bits);
            }
            synchronized (this) {
                state = (state * 0x5DEECE66DL + 0xBL) & ((1L << 48) - 1);
                return (int) (state >>> (48 - bits));
            }
        }
    }
}
