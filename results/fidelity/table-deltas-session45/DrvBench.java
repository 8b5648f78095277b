import java.util.*;
import org.sparklrc.*;
public class DrvBench {
  public static void main(String[] a) {
    int n = Integer.parseInt(a[0]), rdds = 8, versions = 20000;
    Random rnd = new Random(1);
    for (int round = 0; round < 3; round++) {
      TableStore s = new TableStore();
      StringBuilder b = new StringBuilder();
      for (int r = 0; r < rdds; r++) { b.append(r == 0 ? "" : ";").append(r).append('=');
        for (int p = 0; p < n; p++) b.append(p == 0 ? "" : ",").append(rnd.nextInt(50)); }
      s.publish(1, b.toString(), "");
      s.answer(new TableRequest("e1", 1, 0)); s.answer(new TableRequest("e2", 1, 0));
      long t0 = System.nanoTime(); long chars = 0;
      for (int v = 2; v < versions; v++) {
        StringBuilder c = new StringBuilder();
        for (int k = 0; k < 2; k++) { int r = rnd.nextInt(rdds); c.append(k == 0 ? "" : ";").append(r).append('@');
          for (int i = 0; i < 3; i++) c.append(i == 0 ? "" : ",").append(rnd.nextInt(n)).append(':').append(rnd.nextDouble()); }
        s.publish(v, c.toString(), "");
        chars += s.answer(new TableRequest("e1", v - 1, 0)).length();
        chars += s.answer(new TableRequest("e2", v - 1, 0)).length();
      }
      System.out.printf("n=%d round %d: %.2f us per version (publish + 2 answers), %d chars per answer%n", n, round, (System.nanoTime() - t0) / 1e3 / versions, chars / versions / 2);
    }
  }
}
