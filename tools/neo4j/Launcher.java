import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * Runs an embedded Neo4j for local development and the test suite: the Bolt connector, and with
 * --http-port also the HTTP connector, which serves Neo4j Browser at /browser/.
 *
 * Usage: java -cp CLASSPATH Launcher.java --home DIR --port PORT [--http-port PORT]
 *        [--pagecache SIZE] [--listen HOST]
 *
 * Protocol with the parent process (one line each on stdout):
 *   NEO4J_READY bolt://HOST:PORT [http://HOST:PORT]
 *                                  the database accepts Bolt (and HTTP) connections
 *   NEO4J_PORT_IN_USE PORT         another process holds that port (Bolt or HTTP); exit code 3
 *   NEO4J_FAILED message           start-up failed; exit code 1
 * The process stops cleanly on SIGTERM/SIGINT and when its stdin reaches end-of-file, so a parent
 * that dies (and thereby closes the pipe) never leaves an orphan JVM behind.
 */
public final class Launcher {
    private static final int EXIT_FAILED = 1;
    private static final int EXIT_USAGE = 2;
    private static final int EXIT_PORT_IN_USE = 3;

    private Launcher() {}

    public static void main(String[] args) throws Exception {
        Path home = null;
        int port = -1;
        int httpPort = 0;
        String pageCache = "256m";
        String listen = "127.0.0.1";
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--home" -> home = Path.of(args[i + 1]).toAbsolutePath();
                case "--port" -> port = Integer.parseInt(args[i + 1]);
                case "--http-port" -> httpPort = Integer.parseInt(args[i + 1]);
                case "--pagecache" -> pageCache = args[i + 1];
                case "--listen" -> listen = args[i + 1];
                default -> {
                    System.out.println("NEO4J_FAILED unknown option " + args[i]);
                    System.exit(EXIT_USAGE);
                }
            }
        }
        boolean http = httpPort != 0;
        if (home == null || !validPort(port) || (http && (!validPort(httpPort) || httpPort == port))) {
            System.out.println("NEO4J_FAILED usage: --home DIR --port PORT [--http-port PORT] "
                    + "[--pagecache SIZE] [--listen HOST] (two different ports)");
            System.exit(EXIT_USAGE);
        }
        // Neo4j would otherwise fail deep inside start-up, or wait on the port; an early, precise
        // answer lets the parent say which port to change.
        for (int wanted : http ? new int[] {port, httpPort} : new int[] {port}) {
            if (!portIsFree(listen, wanted)) {
                System.out.println("NEO4J_PORT_IN_USE " + wanted);
                System.exit(EXIT_PORT_IN_USE);
            }
        }

        Files.createDirectories(home);
        Path conf = home.resolve("neo4j.conf");
        Files.write(conf, settings(home, listen, port, httpPort, pageCache), StandardCharsets.UTF_8);

        DatabaseManagementService dbms;
        try {
            dbms = new DatabaseManagementServiceBuilder(home).loadPropertiesFromFile(conf).build();
        } catch (RuntimeException e) {
            System.out.println("NEO4J_FAILED " + rootMessage(e));
            System.exit(EXIT_FAILED);
            return;
        }

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                dbms.shutdown();
            } finally {
                stopped.countDown();
            }
        }, "neo4j-shutdown"));

        Thread stdinWatch = new Thread(() -> {
            drain(System.in);
            System.exit(0);
        }, "parent-watch");
        stdinWatch.setDaemon(true);
        stdinWatch.start();

        System.out.println("NEO4J_READY bolt://" + listen + ":" + port + (http ? " http://" + listen + ":" + httpPort : ""));
        System.out.flush();
        stopped.await();
    }

    private static List<String> settings(Path home, String listen, int port, int httpPort, String pageCache) {
        List<String> lines = new ArrayList<>();
        lines.add("server.bolt.enabled=true");
        lines.add("server.bolt.listen_address=" + listen + ":" + port);
        lines.add("server.bolt.advertised_address=" + listen + ":" + port);
        if (httpPort != 0) {
            // Neo4j Browser reads the Bolt address it offers from the HTTP discovery document, which
            // is built from the advertised addresses above.
            lines.add("server.http.enabled=true");
            lines.add("server.http.listen_address=" + listen + ":" + httpPort);
            lines.add("server.http.advertised_address=" + listen + ":" + httpPort);
            // Asks the Browser not to send usage data: a development database has nobody to tell.
            lines.add("client.allow_telemetry=false");
        } else {
            lines.add("server.http.enabled=false");
        }
        lines.add("server.https.enabled=false");
        lines.add("dbms.security.auth_enabled=false");
        lines.add("server.memory.pagecache.size=" + pageCache);
        lines.add("dbms.usage_report.enabled=false");
        lines.add("db.tx_log.rotation.retention_policy=2 files");
        lines.add("db.transaction.timeout=60s");
        lines.add("server.logs.debug.enabled=false");
        lines.add("server.directories.logs=" + home.resolve("logs"));
        // Netty's graceful stop waits out a quiet period (several seconds by default) even when no
        // client is connected; a development database has no reason to linger that long.
        lines.add("internal.dbms.bolt.netty_server_shutdown_quiet_period=0");
        lines.add("internal.dbms.bolt.netty_server_shutdown_timeout=2s");
        return lines;
    }

    private static boolean validPort(int port) {
        return port >= 1 && port <= 65535;
    }

    private static boolean portIsFree(String host, int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getByName(host), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void drain(InputStream in) {
        byte[] buffer = new byte[256];
        try {
            while (in.read(buffer) >= 0) {
                // Keep reading: only end-of-file (the parent is gone) ends the loop.
            }
        } catch (IOException ignored) {
            // A broken pipe means the same as end-of-file here.
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return String.valueOf(t.getMessage()).replace('\n', ' ');
    }
}
