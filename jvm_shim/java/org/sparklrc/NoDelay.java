package org.sparklrc;

import java.net.Socket;
import py4j.ClientServerConnection;
import py4j.DefaultGatewayServerListener;
import py4j.GatewayServer;
import py4j.Py4JPythonClientPerThread;
import py4j.Py4JServerConnection;

/**
 * TCP_NODELAY on the py4j connection the brain drains events on, so that a reply longer than
 * py4j's 8 KiB write buffer leaves at once. Without it, Nagle's algorithm holds the reply's second
 * write until Python's delayed ACK, 40 ms later (measured: a GraphX job start of 15-28k
 * characters reached the brain 44 ms late), and the buffer must cut replies into pieces of
 * {@link EventBuffer#MAX_REPLY_CHARS}, one round trip each.
 */
final class NoDelay extends DefaultGatewayServerListener {
  private NoDelay() {}

  /** A listener for a gateway spark-lrc opens itself (the sidecar's): every connection. */
  static void onEveryConnection(GatewayServer gateway) {
    gateway.addListener(new NoDelay());
  }

  @Override
  public void connectionStarted(Py4JServerConnection connection) {
    set(connection.getSocket());
  }

  /**
   * Whether replies on the connection this call came in on leave at once: PySpark's gateway
   * (py4j's pinned-thread ClientServer) gives each Python thread its own connection, found by
   * the calling thread, and this sets TCP_NODELAY on it; a gateway with {@link
   * #onEveryConnection} has it already. False for any other gateway (py4j's GatewayServer in a
   * PySpark started with PYSPARK_PIN_THREAD=false): the brain then drains in pieces.
   */
  static boolean onCallingConnection(Object server) {
    if (!(server instanceof GatewayServer)) {
      return false;
    }
    GatewayServer gateway = (GatewayServer) server;
    if (gateway.getListeners().stream().anyMatch(l -> l instanceof NoDelay)) {
      return true;
    }
    if (!(gateway.getCallbackClient() instanceof Py4JPythonClientPerThread)) {
      return false;
    }
    ClientServerConnection own =
        ((Py4JPythonClientPerThread) gateway.getCallbackClient()).getPerThreadConnection();
    return own != null && set(own.getSocket());
  }

  private static boolean set(Socket socket) {
    try {
      socket.setTcpNoDelay(true);
      return socket.getTcpNoDelay();
    } catch (Exception e) {
      return false;
    }
  }
}
