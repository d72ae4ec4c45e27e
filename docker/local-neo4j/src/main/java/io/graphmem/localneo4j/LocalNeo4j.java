package io.graphmem.localneo4j;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.QueryExecutionException;

/**
 * An embedded Neo4j Community DBMS that listens for Bolt on the loopback interface only.
 *
 * <p>Arguments (all required): {@code --home DIR --config FILE --port N --password-file FILE}.
 *
 * <p>On every start the password of the {@code neo4j} user is set from the password file, so
 * the file stays the single source of truth. SIGTERM (or SIGINT) shuts the DBMS down cleanly;
 * after SIGKILL the next start recovers from the transaction logs.
 */
public final class LocalNeo4j {

    private LocalNeo4j() {}

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable failure) {
            // The DBMS's threads would keep a half-started JVM alive: exit so that the
            // launcher sees the failure at once (the shutdown hook still stops the DBMS).
            System.out.println("graphmem-local-neo4j: failed: " + failure);
            failure.printStackTrace(System.out);
            System.out.flush();
            System.exit(1);
        }
    }

    private static void run(String[] args) throws Exception {
        Map<String, String> options = parse(args);
        Path home = Path.of(require(options, "home")).toAbsolutePath();
        int port = Integer.parseInt(require(options, "port"));
        String password = readPassword(Path.of(require(options, "password-file")));
        Path config = Path.of(require(options, "config")).toAbsolutePath();

        // The config file (written by graphmem) carries memory and logging settings; the
        // network and auth settings are fixed here so that no config edit can expose the
        // server beyond the loopback interface or switch authentication off.
        DatabaseManagementService service = new DatabaseManagementServiceBuilder(home)
                .loadPropertiesFromFile(config)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("graphmem-local-neo4j: shutting down");
            service.shutdown();
            System.out.println("graphmem-local-neo4j: stopped");
            System.out.flush();
            stopped.countDown();
        }, "graphmem-shutdown"));

        setPassword(service, password);

        System.out.println("graphmem-local-neo4j: ready bolt://127.0.0.1:" + port + " home=" + home);
        System.out.flush();
        stopped.await();
    }

    /** Makes the password file's content the password of user neo4j. */
    private static void setPassword(DatabaseManagementService service, String password) {
        try {
            service.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                    Map.of("password", password));
        } catch (QueryExecutionException e) {
            // Every start after the first: the password is already the file's.
            if (!String.valueOf(e.getMessage()).contains("Old password and new password cannot be the same")) {
                throw e;
            }
        }
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --name value pairs, got: " + arg);
            }
            options.put(arg.substring(2), args[++i]);
        }
        return options;
    }

    private static String require(Map<String, String> options, String name) {
        String value = options.get(name);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("missing required option --" + name);
        }
        return value;
    }

    private static String readPassword(Path file) throws IOException {
        String password = Files.readString(file, StandardCharsets.UTF_8).strip();
        if (password.length() < 8) {
            throw new IllegalArgumentException("password file " + file + " must hold at least 8 characters");
        }
        return password;
    }
}
