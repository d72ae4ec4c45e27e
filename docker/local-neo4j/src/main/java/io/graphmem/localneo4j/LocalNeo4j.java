package io.graphmem.localneo4j;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import inet.ipaddr.IPAddressString;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.QueryExecutionException;

/**
 * An embedded Neo4j Community DBMS that listens for Bolt on the loopback interface only.
 *
 * <p>Arguments: {@code --home DIR --config FILE --port N --password-file FILE}, and optionally
 * {@code --remove-unknown-users true}.
 *
 * <p>Each start runs in two steps. First the DBMS starts with Bolt off: the password of the
 * {@code neo4j} user is set from the password file (the file stays the single source of truth)
 * and the users are checked; a user other than {@code neo4j} makes the start refuse (exit 3)
 * unless {@code --remove-unknown-users} drops them. Only then does the DBMS start again with
 * Bolt on, so that no connection is ever accepted with Neo4j's default or an unknown
 * credential. {@code LOAD CSV} cannot read files (file URLs are off, its import directory is
 * an empty folder of the home) nor reach any network address. SIGTERM (or SIGINT) shuts the
 * DBMS down cleanly; after SIGKILL the next start recovers from the transaction logs.
 */
public final class LocalNeo4j {

    /** The one user graphmem creates and uses. */
    private static final String OWN_USER = "neo4j";
    /** Exit status of a start refused because of unknown users. */
    private static final int REFUSED = 3;

    private LocalNeo4j() {}

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Refused refused) {
            System.out.println("graphmem-local-neo4j: refused: " + refused.getMessage());
            System.out.flush();
            System.exit(REFUSED);
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
        boolean removeUnknownUsers = Boolean.parseBoolean(options.getOrDefault("remove-unknown-users", "false"));
        Path imports = home.resolve("import");
        Files.createDirectories(imports);

        AtomicReference<DatabaseManagementService> running = new AtomicReference<>();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            DatabaseManagementService service = running.getAndSet(null);
            if (service != null) {
                System.out.println("graphmem-local-neo4j: shutting down");
                service.shutdown();
                System.out.println("graphmem-local-neo4j: stopped");
                System.out.flush();
            }
            stopped.countDown();
        }, "graphmem-shutdown"));

        // Step 1, Bolt off: nobody can connect while the password is set and the users checked.
        DatabaseManagementService closed = build(home, config, imports, port, false);
        running.set(closed);
        try {
            setPassword(closed, password);
            checkUsers(closed, removeUnknownUsers);
        } finally {
            if (running.compareAndSet(closed, null)) {
                closed.shutdown();
            }
        }

        if (stopped.getCount() == 0) {
            return; // a SIGTERM came during step 1: do not start again
        }
        // Step 2, Bolt on.
        DatabaseManagementService service = build(home, config, imports, port, true);
        running.set(service);
        System.out.println("graphmem-local-neo4j: ready bolt://127.0.0.1:" + port + " home=" + home);
        System.out.flush();
        stopped.await();
    }

    /**
     * The DBMS of {@code home}. The config file (written by graphmem) carries memory and logging
     * settings; the network, auth and file-access settings are fixed here, after it, so that no
     * config edit can expose the server beyond the loopback interface, switch authentication
     * off or let {@code LOAD CSV} read the host's files or reach the network.
     */
    private static DatabaseManagementService build(Path home, Path config, Path imports, int port, boolean bolt)
            throws IOException {
        return new DatabaseManagementServiceBuilder(home)
                .loadPropertiesFromFile(config)
                .setConfig(BoltConnector.enabled, bolt)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.allow_file_urls, false)
                .setConfig(GraphDatabaseSettings.load_csv_file_url_root, imports)
                .setConfig(GraphDatabaseInternalSettings.cypher_ip_blocklist,
                        List.of(new IPAddressString("0.0.0.0/0"), new IPAddressString("::/0")))
                .build();
    }

    /** Makes the password file's content the password of user neo4j. */
    private static void setPassword(DatabaseManagementService service, String password) {
        try {
            system(service).executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                    Map.of("password", password));
        } catch (QueryExecutionException e) {
            // Every start after the first: the password is already the file's.
            if (!String.valueOf(e.getMessage()).contains("Old password and new password cannot be the same")) {
                throw e;
            }
        }
    }

    /** Refuses a store with users other than graphmem's own, or drops them when told to. */
    private static void checkUsers(DatabaseManagementService service, boolean remove) throws Refused {
        List<String> unknown = system(service).executeTransactionally(
                "SHOW USERS YIELD user RETURN user ORDER BY user", Map.of(), result -> {
                    List<String> names = new ArrayList<>();
                    result.forEachRemaining(row -> {
                        String name = String.valueOf(row.get("user"));
                        if (!OWN_USER.equals(name)) {
                            names.add(name);
                        }
                    });
                    return names;
                });
        if (unknown.isEmpty()) {
            return;
        }
        if (!remove) {
            throw new Refused("the store has users that graphmem did not create: " + String.join(", ", unknown)
                    + " (graphmem's local server has one user, neo4j; any other was added by someone else)");
        }
        for (String name : unknown) {
            system(service).executeTransactionally("DROP USER $name", Map.of("name", name));
            System.out.println("graphmem-local-neo4j: dropped unknown user " + name);
        }
    }

    private static org.neo4j.graphdb.GraphDatabaseService system(DatabaseManagementService service) {
        return service.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
    }

    /** A start refused for a reason the user can act on. */
    private static final class Refused extends Exception {
        Refused(String message) {
            super(message);
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
