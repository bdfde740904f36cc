package org.researchrepository.testnode;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.opensearch.action.admin.cluster.configuration.AddVotingConfigExclusionsAction;
import org.opensearch.action.admin.cluster.configuration.AddVotingConfigExclusionsRequest;
import org.opensearch.action.admin.cluster.configuration.ClearVotingConfigExclusionsAction;
import org.opensearch.action.admin.cluster.configuration.ClearVotingConfigExclusionsRequest;
import org.opensearch.action.admin.cluster.health.ClusterHealthResponse;
import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.index.mapper.MapperExtrasPlugin;
import org.opensearch.index.reindex.ReindexPlugin;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.painless.PainlessPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * Runs one or more OpenSearch nodes inside this JVM for the Python test suite.
 *
 * <p>Everything comes from Maven Central: the server jar and the modules a
 * distribution would load from {@code modules/}, put on the classpath here and
 * handed to {@link TestNode} as classpath plugins.
 *
 * <p>Protocol (stdout is reserved for it; logging goes to a file):
 * <pre>
 *   -> NODE i http://127.0.0.1:PORT   (one per node)
 *   -> READY
 *   <- stop i     -> STOPPED i
 *   <- start i    -> NODE i http://...  then STARTED i
 *   <- quit       (or EOF on stdin: the JVM never outlives its parent)
 * </pre>
 * A failed command prints {@code ERROR <message>} and the loop goes on.
 */
public final class TestCluster {

    private static final List<Class<? extends Plugin>> PLUGINS = List.of(
        Netty4Plugin.class,
        CommonAnalysisPlugin.class,
        MapperExtrasPlugin.class,
        ReindexPlugin.class,
        PainlessPlugin.class
    );

    private final int size;
    private final Path dataDir;
    private final String clusterName;
    private final int[] httpPorts;
    private final int[] transportPorts;
    private final Node[] nodes;
    private final PrintStream out;

    /**
     * A plain {@link Node} built from classpath plugins (the constructor that
     * takes them is protected). Unlike the test framework's MockNode it does not
     * drag RandomizedTesting onto the classpath, whose mere presence makes
     * {@code Randomness.get()} demand a RandomizedRunner context.
     */
    static final class TestNode extends Node {
        TestNode(Settings settings) {
            super(
                InternalSettingsPreparer.prepareEnvironment(settings, Collections.emptyMap(), null, () -> "test-node"),
                PLUGINS,
                true
            );
        }

        /**
         * The node/cluster-id log pattern converter can be set once per JVM;
         * a second node, or a restarted one, would fail on it.
         */
        @Override
        protected void configureNodeAndClusterIdStateListener(ClusterService clusterService) {}
    }

    private TestCluster(Path dataDir, String clusterName, int[] httpPorts, int[] transportPorts, PrintStream out) {
        this.size = httpPorts.length;
        this.dataDir = dataDir;
        this.clusterName = clusterName;
        this.httpPorts = httpPorts;
        this.transportPorts = transportPorts;
        this.nodes = new Node[size];
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        int count = 1;
        Path data = null;
        String name = "test-cluster";
        int[] http = null;
        int[] transport = null;
        for (int i = 0; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--nodes": count = Integer.parseInt(value); i++; break;
                case "--data": data = Paths.get(value).toAbsolutePath(); i++; break;
                case "--cluster-name": name = value; i++; break;
                case "--http-ports": http = parsePorts(value); i++; break;
                case "--transport-ports": transport = parsePorts(value); i++; break;
                default: throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (data == null) {
            throw new IllegalArgumentException("--data DIR is required");
        }
        if (count < 1) {
            throw new IllegalArgumentException("--nodes must be at least 1");
        }
        Files.createDirectories(data);

        // Before any logger exists: route log4j to a file under DIR, keep the real stdout
        // for the protocol, and send whatever else prints to stdout to stderr instead.
        System.setProperty("testnode.log.file", data.resolve("logs").resolve("opensearch.log").toString());
        System.setProperty("log4j2.configurationFile", "testnode-log4j2.properties");
        System.setProperty("opensearch.set.netty.runtime.available.processors", "false");
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);

        if (http == null) {
            http = freePorts(count);
        }
        if (transport == null) {
            transport = freePorts(count);
        }
        if (http.length != count || transport.length != count) {
            throw new IllegalArgumentException("need one HTTP and one transport port per node");
        }

        TestCluster cluster = new TestCluster(data, name, http, transport, protocol);
        Runtime.getRuntime().addShutdownHook(new Thread(cluster::closeAll, "testnode-shutdown"));
        try {
            cluster.startAll();
        } catch (Throwable t) {
            t.printStackTrace();
            protocol.println("ERROR " + oneLine(t));
            cluster.closeAll();
            System.exit(1);
        }
        cluster.commandLoop();
        cluster.closeAll();
        System.exit(0);
    }

    private static int[] parsePorts(String value) {
        return Arrays.stream(value.split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
    }

    /** Ports are reserved up front so a restarted node comes back on the same addresses. */
    private static int[] freePorts(int count) throws IOException {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                sockets.add(socket);
                ports[i] = socket.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket socket : sockets) {
                socket.close();
            }
        }
    }

    private static String oneLine(Throwable t) {
        String message = t.toString();
        return message.replace('\n', ' ').replace('\r', ' ');
    }

    private String nodeName(int i) {
        return "node-" + i;
    }

    private Settings settings(int i) {
        Path home = dataDir.resolve(nodeName(i));
        Settings.Builder builder = Settings.builder()
            .put("cluster.name", clusterName)
            .put("node.name", nodeName(i))
            .put("path.home", home.toString())
            .put("path.data", home.resolve("data").toString())
            .put("path.logs", dataDir.resolve("logs").toString())
            .put("path.repo", dataDir.resolve("snapshots").toString())
            .put("network.host", "127.0.0.1")
            .put("http.port", httpPorts[i])
            .put("transport.port", transportPorts[i])
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            // The real-memory breaker counts uncollected garbage, which a small
            // heap under the serial collector is mostly made of.
            .put("indices.breaker.total.use_real_memory", false)
            .put("indices.queries.cache.size", "5%")
            .put("indices.fielddata.cache.size", "10%")
            // Node.start() would otherwise block up to 30 s for a cluster-manager,
            // which for a multi-node cluster only exists once the others have started.
            .put("discovery.initial_state_timeout", "0s");
        if (size == 1) {
            builder.put("discovery.type", "single-node");
        } else {
            List<String> seeds = new ArrayList<>();
            List<String> names = new ArrayList<>();
            for (int j = 0; j < size; j++) {
                seeds.add("127.0.0.1:" + transportPorts[j]);
                names.add(nodeName(j));
            }
            builder.putList("discovery.seed_hosts", seeds);
            builder.putList("cluster.initial_cluster_manager_nodes", names);
        }
        return builder.build();
    }

    private String url(int i) {
        return "http://127.0.0.1:" + httpPorts[i];
    }

    private int liveCount() {
        int live = 0;
        for (Node node : nodes) {
            if (node != null) {
                live++;
            }
        }
        return live;
    }

    private Node anyLiveNodeExcept(int i) {
        for (int j = 0; j < size; j++) {
            if (j != i && nodes[j] != null) {
                return nodes[j];
            }
        }
        return null;
    }

    private void startAll() throws Exception {
        for (int i = 0; i < size; i++) {
            nodes[i] = new TestNode(settings(i)).start();
        }
        awaitReady(nodes[0]);
        for (int i = 0; i < size; i++) {
            awaitHttp(i);
        }
        for (int i = 0; i < size; i++) {
            out.println("NODE " + i + " " + url(i));
        }
        out.println("READY");
    }

    /** Waits until every live node has joined and no primary is unassigned. */
    private void awaitReady(Node via) {
        ClusterHealthResponse health = via.client()
            .admin()
            .cluster()
            .prepareHealth()
            .setWaitForYellowStatus()
            .setWaitForNodes(Integer.toString(liveCount()))
            .setTimeout(TimeValue.timeValueMinutes(2))
            .get();
        if (health.isTimedOut()) {
            throw new IllegalStateException("cluster not ready: " + health);
        }
    }

    private void awaitHttp(int i) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        IOException last = null;
        while (System.nanoTime() < deadline) {
            try {
                HttpURLConnection connection = (HttpURLConnection) new URL(url(i) + "/").openConnection();
                connection.setConnectTimeout(2000);
                connection.setReadTimeout(10000);
                int status = connection.getResponseCode();
                connection.getInputStream().close();
                connection.disconnect();
                if (status == 200) {
                    return;
                }
            } catch (IOException e) {
                last = e;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("HTTP of node " + i + " does not answer at " + url(i), last);
    }

    private void commandLoop() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split("\\s+");
            if (words.length == 0 || words[0].isEmpty()) {
                continue;
            }
            try {
                switch (words[0]) {
                    case "quit":
                        return;
                    case "stop":
                        stop(index(words));
                        out.println("STOPPED " + words[1]);
                        break;
                    case "start":
                        int i = index(words);
                        start(i);
                        out.println("NODE " + i + " " + url(i));
                        out.println("STARTED " + i);
                        break;
                    default:
                        out.println("ERROR unknown command " + words[0]);
                }
            } catch (Throwable t) {
                t.printStackTrace();
                out.println("ERROR " + oneLine(t));
            }
        }
    }

    private int index(String[] words) {
        if (words.length != 2) {
            throw new IllegalArgumentException(words[0] + " needs a node number");
        }
        int i = Integer.parseInt(words[1]);
        if (i < 0 || i >= size) {
            throw new IllegalArgumentException("no node " + i);
        }
        return i;
    }

    /**
     * Closes node i. With two cluster-manager-eligible nodes the voting
     * configuration holds only one of them, so the leaving node is first
     * excluded from voting; otherwise stopping the elected one would leave the
     * other without a quorum.
     */
    private void stop(int i) throws Exception {
        Node node = nodes[i];
        if (node == null) {
            throw new IllegalStateException("node " + i + " is not running");
        }
        Node other = anyLiveNodeExcept(i);
        if (other != null) {
            try {
                other.client()
                    .execute(AddVotingConfigExclusionsAction.INSTANCE, new AddVotingConfigExclusionsRequest(nodeName(i)))
                    .get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                // A cluster without a cluster-manager cannot reconfigure; the node is stopped all the same.
                e.printStackTrace();
            }
        }
        nodes[i] = null;
        closeNode(node);
        if (other != null) {
            try {
                ClearVotingConfigExclusionsRequest clear = new ClearVotingConfigExclusionsRequest();
                clear.setTimeout(TimeValue.timeValueSeconds(60));
                other.client().execute(ClearVotingConfigExclusionsAction.INSTANCE, clear).get(90, TimeUnit.SECONDS);
            } catch (Exception e) {
                e.printStackTrace();
            }
        }
    }

    private void start(int i) throws Exception {
        if (nodes[i] != null) {
            throw new IllegalStateException("node " + i + " is already running");
        }
        nodes[i] = new TestNode(settings(i)).start();
        awaitReady(nodes[i]);
        awaitHttp(i);
    }

    private static void closeNode(Node node) {
        try {
            node.close();
            node.awaitClose(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            e.printStackTrace();
        }
    }

    private synchronized void closeAll() {
        for (int i = size - 1; i >= 0; i--) {
            Node node = nodes[i];
            nodes[i] = null;
            if (node != null) {
                closeNode(node);
            }
        }
    }
}
